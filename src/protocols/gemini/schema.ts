import * as v from 'valibot';
import { arrayOfObjects, arrayOfStrings, int, looseObj, missing, num, obj, str } from '../../schemas/common.js';
import { isRecord } from '../../json.js';
import { camelCaseRequest } from './field-names.js';

/**
 * `POST /v1beta/models/{model}:generateContent` and `:streamGenerateContent`: Google's
 * `GenerateContentRequest`, read in camelCase (snake_case keys are renamed first, as Google's
 * API takes both). The model and streaming come from the path, not the body. Unknown fields are
 * kept; the decoder refuses those it cannot serve.
 */
const part = obj('a Part object');

const content = looseObj(
  {
    role: v.optional(str()),
    parts: v.pipe(v.array(part, 'a non-empty array of Part objects'), v.minLength(1, 'a non-empty array of Part objects')),
  },
  'a Content object',
);

const generationConfig = looseObj(
  {
    stopSequences: v.optional(arrayOfStrings()),
    responseMimeType: v.optional(str()),
    candidateCount: v.optional(int({ min: 1 })),
    maxOutputTokens: v.optional(int({ min: 1 })),
    temperature: v.optional(num({ min: 0, max: 2 })),
    topP: v.optional(num({ min: 0, max: 1 })),
    topK: v.optional(int({ min: 1 })),
    seed: v.optional(int()),
    presencePenalty: v.optional(num()),
    frequencyPenalty: v.optional(num()),
    thinkingConfig: v.optional(obj()),
  },
  'a GenerationConfig object',
);

export const geminiRequestSchema = v.pipe(
  v.custom<Record<string, unknown>>(isRecord, 'a JSON object'),
  v.transform(camelCaseRequest),
  looseObj(
    {
      contents: v.pipe(
        v.custom<unknown>((value) => value !== undefined && value !== null, missing()),
        v.array(content, 'a non-empty array of Content objects'),
        v.minLength(1, 'a non-empty array of Content objects'),
      ),
      systemInstruction: v.optional(content),
      tools: v.optional(arrayOfObjects()),
      toolConfig: v.optional(obj()),
      safetySettings: v.optional(arrayOfObjects()),
      generationConfig: v.optional(generationConfig),
      cachedContent: v.optional(str()),
    },
    'a JSON object',
  ),
);
