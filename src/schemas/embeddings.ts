import * as v from 'valibot';
import { int, looseObj, model, oneOf, str } from './common.js';

/** Most inputs one request may embed (OpenAI's limit). */
export const MAX_EMBEDDING_INPUTS = 2048;

/** What `input` holds: one text, texts, one token array, or token arrays. */
export type EmbeddingInput = string | string[] | number[] | number[][];

export const ENCODING_FORMATS = ['float', 'base64'] as const;

const INPUT_EXPECTED = `a non-empty string, an array of 1 to ${MAX_EMBEDDING_INPUTS} non-empty strings, an array of token ids or an array of 1 to ${MAX_EMBEDDING_INPUTS} arrays of token ids`;
const TOKEN_EXPECTED = 'a token id (an integer from 0 to 4294967295)';

/** `POST /v1/embeddings`, as OpenAI takes it; unknown fields are kept for an upstream that knows them. */
export const embeddingRequestSchema = looseObj(
  {
    // Checked by hand below: a valibot union would report a bad item as a vague union issue, not at `input[3]`.
    input: v.pipe(
      v.custom<EmbeddingInput>(() => true, INPUT_EXPECTED),
      v.rawCheck<EmbeddingInput>(({ dataset, addIssue }) => {
        const issue = inputIssue(dataset.value);
        if (issue) addIssue(issue);
      }),
    ),
    model: model(),
    encoding_format: v.optional(oneOf(ENCODING_FORMATS)),
    dimensions: v.optional(int({ min: 1 })),
    user: v.optional(str()),
  },
  'a JSON object',
);

export type EmbeddingRequestBody = v.InferOutput<typeof embeddingRequestSchema>;

interface Issue {
  message: string;
  input: unknown;
  path?: [v.ArrayPathItem] | [v.ArrayPathItem, v.ArrayPathItem];
}

/**
 * What OpenAI rejects: an empty string (alone or as an item), an empty array, more than 2048
 * inputs, arrays mixing texts and tokens, token ids that are not non-negative integers, an empty
 * token array. The first item decides which kind of array it is; a bad item is named by its path.
 */
function inputIssue(input: unknown): Issue | undefined {
  if (typeof input === 'string') return input === '' ? { message: INPUT_EXPECTED, input } : undefined;
  if (!Array.isArray(input) || input.length === 0) return { message: INPUT_EXPECTED, input };
  const at = (index: number, value: unknown, inner?: number, innerValue?: unknown): NonNullable<Issue['path']> => {
    const outer: v.ArrayPathItem = { type: 'array', origin: 'value', input, key: index, value };
    if (inner === undefined) return [outer];
    return [outer, { type: 'array', origin: 'value', input: value as unknown[], key: inner, value: innerValue }];
  };
  const first = input[0];
  if (typeof first === 'number') {
    // One token array: its length is bounded by the model's context, which the upstream knows.
    const bad = input.findIndex((token) => !isTokenId(token));
    return bad >= 0 ? { message: TOKEN_EXPECTED, input: input[bad], path: at(bad, input[bad]) } : undefined;
  }
  if (input.length > MAX_EMBEDDING_INPUTS) return { message: INPUT_EXPECTED, input };
  if (typeof first === 'string') {
    const bad = input.findIndex((item) => typeof item !== 'string' || item === '');
    return bad >= 0 ? { message: 'a non-empty string', input: input[bad], path: at(bad, input[bad]) } : undefined;
  }
  if (Array.isArray(first)) {
    for (const [index, item] of input.entries()) {
      if (!Array.isArray(item) || item.length === 0) {
        return { message: 'a non-empty array of token ids', input: item, path: at(index, item) };
      }
      const bad = item.findIndex((token) => !isTokenId(token));
      if (bad >= 0) return { message: TOKEN_EXPECTED, input: item[bad], path: at(index, item, bad, item[bad]) };
    }
    return undefined;
  }
  return { message: 'a non-empty string, a token id or an array of token ids', input: first, path: at(0, first) };
}

function isTokenId(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= 0xffffffff;
}
