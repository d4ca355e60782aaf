import * as v from 'valibot';
import { int, looseObj, oneOf, str } from './common.js';

/** Most requests one `batchEmbedContents` call takes (Google's limit). */
export const MAX_GEMINI_EMBED_REQUESTS = 100;

/** Google's task types (`EmbedContentRequest.taskType`). */
const TASK_TYPES = [
  'TASK_TYPE_UNSPECIFIED',
  'RETRIEVAL_QUERY',
  'RETRIEVAL_DOCUMENT',
  'SEMANTIC_SIMILARITY',
  'CLASSIFICATION',
  'CLUSTERING',
  'QUESTION_ANSWERING',
  'FACT_VERIFICATION',
  'CODE_RETRIEVAL_QUERY',
] as const;

/** One text to embed: a `Content` whose parts are texts (the gateway embeds text only). */
const textPart = looseObj({ text: str() }, 'a part with `text` (only text is embedded)');
const content = looseObj(
  { parts: v.pipe(v.array(textPart, 'a non-empty array of parts'), v.minLength(1, 'a non-empty array of parts')), role: v.optional(str()) },
  'a Content object with `parts`',
);

/** `EmbedContentRequest`: also each item of a batch. `model` in an item must name the URL's model. */
export const geminiEmbedRequestSchema = looseObj(
  {
    model: v.optional(str()),
    content,
    taskType: v.optional(oneOf(TASK_TYPES)),
    title: v.optional(str()),
    outputDimensionality: v.optional(int({ min: 1 })),
  },
  'a JSON object',
);

/** `BatchEmbedContentsRequest`. */
export const geminiBatchEmbedRequestSchema = looseObj(
  {
    requests: v.pipe(
      v.array(geminiEmbedRequestSchema, `an array of 1 to ${MAX_GEMINI_EMBED_REQUESTS} requests`),
      v.minLength(1, `an array of 1 to ${MAX_GEMINI_EMBED_REQUESTS} requests`),
      v.maxLength(MAX_GEMINI_EMBED_REQUESTS, `an array of 1 to ${MAX_GEMINI_EMBED_REQUESTS} requests`),
    ),
  },
  'a JSON object',
);

export type GeminiEmbedRequest = v.InferOutput<typeof geminiEmbedRequestSchema>;
