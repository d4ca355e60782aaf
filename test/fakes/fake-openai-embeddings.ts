import type { ServerResponse } from 'node:http';
import { sendJson, type MediaRequest } from './media-server.js';

/** Embedding models of the fake and their vector lengths; only the text-embedding-3 models shorten. */
export const FAKE_EMBEDDING_MODELS: Record<string, { dimensions: number; shortens: boolean }> = {
  'text-embedding-3-small': { dimensions: 1536, shortens: true },
  'text-embedding-ada-002': { dimensions: 1536, shortens: false },
};

const FIELDS = ['input', 'model', 'encoding_format', 'dimensions', 'user'];

/**
 * The fake's `POST /v1/embeddings`, as strict as OpenAI's: the bearer key, a known model, no
 * field OpenAI does not take, `input` as OpenAI accepts it, `dimensions` only on models that
 * shorten. Vectors are `fakeVector` of each input, as floats or little-endian float32 base64.
 */
export function answerEmbeddings(request: MediaRequest, response: ServerResponse, apiKey: string): void {
  const refusal = refusalOf(request, apiKey);
  if (refusal) {
    const { status, message, param = null, code = null } = refusal;
    sendJson(response, { error: { message, type: 'invalid_request_error', param, code } }, status);
    return;
  }
  const body = request.json;
  const dimensions = body.dimensions ?? FAKE_EMBEDDING_MODELS[body.model]!.dimensions;
  let tokens = 0;
  const data = inputsOf(body.input)!.map((input, index) => {
    tokens += typeof input === 'string' ? input.split(/\s+/).filter(Boolean).length : input.length;
    const vector = fakeVector(typeof input === 'string' ? input : input.join(','), dimensions);
    return { object: 'embedding', index, embedding: body.encoding_format === 'base64' ? base64(vector) : vector };
  });
  sendJson(response, { object: 'list', data, model: `${body.model}-fake-snapshot`, usage: { prompt_tokens: tokens, total_tokens: tokens } });
}

interface Refusal {
  status: number;
  message: string;
  param?: string;
  code?: string;
}

/** What OpenAI would refuse in the request, if anything. */
function refusalOf(request: MediaRequest, apiKey: string): Refusal | undefined {
  if (request.headers.authorization !== `Bearer ${apiKey}`) return { status: 401, message: 'Incorrect API key provided.', code: 'invalid_api_key' };
  const body = request.json;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return { status: 400, message: 'We could not parse the JSON body of your request.' };
  const unknown = Object.keys(body).find((field) => !FIELDS.includes(field));
  if (unknown) return { status: 400, message: `Unrecognized request argument supplied: ${unknown}` };
  const model = FAKE_EMBEDDING_MODELS[body.model];
  if (!model) return { status: 404, message: `The model \`${body.model}\` does not exist or you do not have access to it.`, code: 'model_not_found' };
  if (!inputsOf(body.input))
    return { status: 400, message: "'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference." };
  if (body.encoding_format !== undefined && body.encoding_format !== 'float' && body.encoding_format !== 'base64')
    return { status: 400, message: `'${body.encoding_format}' is not one of ['float', 'base64'] - 'encoding_format'` };
  if (body.dimensions === undefined) return undefined;
  if (!model.shortens) return { status: 400, message: 'This model does not support specifying dimensions.' };
  if (!Number.isInteger(body.dimensions) || body.dimensions < 1 || body.dimensions > model.dimensions)
    return { status: 400, message: `Invalid value for 'dimensions' = ${body.dimensions}. Must be between 1 and ${model.dimensions}.`, param: 'dimensions' };
  return undefined;
}

/** A deterministic vector of `dimensions` float32 values for a text: what the tests expect back. */
export function fakeVector(text: string, dimensions: number): number[] {
  let seed = 7;
  for (const character of text) seed = (seed * 31 + character.codePointAt(0)!) % 1_000_003;
  return Array.from({ length: dimensions }, (_, at) => Math.fround(Math.sin(seed + at * 0.7) / 10));
}

function base64(vector: number[]): string {
  return Buffer.from(new Float32Array(vector).buffer).toString('base64');
}

/** OpenAI's input rules: a non-empty string, 1–2048 non-empty strings, a token array, or 1–2048 token arrays. */
function inputsOf(input: unknown): (string | number[])[] | undefined {
  const token = (value: unknown) => Number.isInteger(value) && (value as number) >= 0;
  if (typeof input === 'string') return input === '' ? undefined : [input];
  if (!Array.isArray(input) || input.length === 0) return undefined;
  if (input.every(token)) return [input as number[]];
  if (input.length > 2048) return undefined;
  if (input.every((item) => typeof item === 'string' && item !== '')) return input as string[];
  if (input.every((item) => Array.isArray(item) && item.length > 0 && item.every(token))) return input as number[][];
  return undefined;
}
