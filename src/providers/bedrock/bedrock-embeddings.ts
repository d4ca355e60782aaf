import { invalidRequest, upstreamInvalidResponse } from '../../errors.js';
import { isRecord, type Json } from '../../json.js';
import { dimensionsUnsupported, textInputs } from '../embedding-inputs.js';
import type { EmbeddingVector } from '../media.js';
import { CALLS_IN_FLIGHT, mapLimited } from '../http/map-limited.js';
import type { CallContext, EmbeddingCapability } from '../provider.js';

/** A signed `invoke` call: the answer's JSON and headers. */
export type InvokeJson = (model: string, body: Json, call: CallContext) => Promise<{ json: unknown; headers: Record<string, string | string[] | undefined> }>;

/** Most texts one Cohere embed call takes (Bedrock's limit). */
const COHERE_BATCH = 96;
const TITAN_V2_DIMENSIONS = new Set([256, 512, 1024]);
const COHERE_V4_DIMENSIONS = new Set([256, 512, 1024, 1536]);

/**
 * Embeddings on Bedrock's `invoke`, in each model family's own body:
 * - Titan Text Embeddings (`amazon.titan-embed-text-v2:0`, `-v1`): one text per call (the texts
 *   of a request go in parallel calls, 8 at a time, and the first failure ends them all), `dimensions` 256, 512 or 1024 on v2 (v1 has a fixed
 *   length), vectors normalized as OpenAI's are; tokens from `inputTextTokenCount`.
 * - Cohere Embed (`cohere.embed-english-v3`, `cohere.embed-multilingual-v3`, `cohere.embed-v4:0`):
 *   up to 96 texts a call, `input_type: search_document` (the client's `input_type` when it sends
 *   one), float vectors; tokens from the `x-amzn-bedrock-input-token-count` header. v3 has a fixed
 *   length; v4 takes `dimensions` 256, 512, 1024 or 1536 (`output_dimension`).
 * Text only: token arrays are a 400 naming `input`.
 */
export function bedrockEmbeddings(invoke: InvokeJson): EmbeddingCapability {
  return {
    async embed(request, call) {
      const texts = textInputs(request.input, call.model);
      const model = request.model;
      if (/(^|\.)cohere\.embed/.test(model)) return cohere(invoke, model, texts, request as unknown as Json, call);
      if (/(^|\.)amazon\.titan-embed/.test(model)) return titan(invoke, model, texts, request.dimensions, call);
      throw invalidRequest(`The model \`${call.model.id}\` is not a Bedrock embedding model this gateway knows (Titan or Cohere Embed).`, 'model');
    },
  };
}

async function titan(invoke: InvokeJson, model: string, texts: string[], dimensions: number | undefined, call: CallContext) {
  const v2 = /titan-embed-text-v2/.test(model);
  if (dimensions !== undefined) {
    if (!v2) throw dimensionsUnsupported(call.model);
    if (!TITAN_V2_DIMENSIONS.has(dimensions)) throw invalidRequest('`dimensions` must be 256, 512 or 1024 for this model.', 'dimensions', 'invalid_value');
  }
  const answers = await mapLimited(texts, CALLS_IN_FLIGHT, call.signal, (inputText, signal) =>
    invoke(model, v2 ? { inputText, ...(dimensions !== undefined ? { dimensions } : {}), normalize: true } : { inputText }, { ...call, signal }),
  );
  let tokens = 0;
  const data: EmbeddingVector[] = answers.map(({ json }, index) => {
    const embedding = isRecord(json) ? json.embedding : undefined;
    if (!isNumbers(embedding)) throw upstreamInvalidResponse(`The upstream embeddings answer has no embedding for input ${index}.`);
    if (isRecord(json) && typeof json.inputTextTokenCount === 'number') tokens += json.inputTextTokenCount;
    return { index, embedding };
  });
  return { data, usage: { prompt_tokens: tokens } };
}

async function cohere(invoke: InvokeJson, model: string, texts: string[], request: Json, call: CallContext) {
  // Embed v4 shortens its vectors (`output_dimension`); v3's have a fixed length.
  const v4 = /cohere\.embed-v4/.test(model);
  const dimensions = request.dimensions as number | undefined;
  if (dimensions !== undefined) {
    if (!v4) throw dimensionsUnsupported(call.model);
    if (!COHERE_V4_DIMENSIONS.has(dimensions))
      throw invalidRequest('`dimensions` must be 256, 512, 1024 or 1536 for this model.', 'dimensions', 'invalid_value');
  }
  const shortened = dimensions !== undefined ? { output_dimension: dimensions } : {};
  const inputType = typeof request.input_type === 'string' ? request.input_type : 'search_document';
  const batches: string[][] = [];
  for (let start = 0; start < texts.length; start += COHERE_BATCH) batches.push(texts.slice(start, start + COHERE_BATCH));
  const answers = await mapLimited(batches, CALLS_IN_FLIGHT, call.signal, (batch, signal) =>
    invoke(model, { texts: batch, input_type: inputType, embedding_types: ['float'], ...shortened }, { ...call, signal }),
  );
  const data: EmbeddingVector[] = [];
  let tokens = 0;
  answers.forEach(({ json, headers }, batch) => {
    const raw = isRecord(json) ? json.embeddings : undefined;
    // `embedding_types` asked: `{float: [[…]]}`; an older answer is the bare list.
    const vectors = isRecord(raw) ? raw.float : raw;
    if (!Array.isArray(vectors) || vectors.length !== batches[batch]!.length || !vectors.every(isNumbers)) {
      throw upstreamInvalidResponse('The upstream answered a different number of embeddings than it was sent texts.');
    }
    for (const embedding of vectors) data.push({ index: data.length, embedding });
    const header = headers['x-amzn-bedrock-input-token-count'];
    const count = Number(Array.isArray(header) ? header[0] : header);
    if (Number.isFinite(count)) tokens += count;
  });
  return { data, usage: { prompt_tokens: tokens } };
}

function isNumbers(value: unknown): value is number[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'number');
}
