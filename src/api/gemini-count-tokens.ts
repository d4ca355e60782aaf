import * as v from 'valibot';
import type { RouteContext } from '../http/route.js';
import { geminiClient } from '../protocols/gemini/index.js';
import { geminiRequestSchema } from '../protocols/gemini/schema.js';
import { isRecord } from '../json.js';
import { looseObj } from '../schemas/common.js';
import { validateBody } from '../schemas/validate.js';
import { handleTokenCount, type TokenCountEndpoint } from './token-count.js';

/**
 * Google's `CountTokensRequest`: `contents` alone, or a whole `generateContentRequest` (which
 * counts the system instruction and tools too). The plain form is checked as a generation body
 * of those contents in `prepare`, so a bad content is named at its own path.
 */
const countTokensSchema = looseObj({ generateContentRequest: v.optional(geminiRequestSchema) }, 'a JSON object');

const countTokens: TokenCountEndpoint = {
  protocol: 'gemini',
  endpoint: '/v1beta/models/{model}:countTokens',
  schema: countTokensSchema,
  routeFields: geminiClient.routeFields!,
  async prepare(_context, body) {
    const { model, stream } = body;
    const request = isRecord(body.generateContentRequest) ? body.generateContentRequest : validateBody(geminiRequestSchema, { contents: body.contents });
    const { model: _inner, ...fields } = request;
    return { ...fields, model, stream };
  },
  decode: geminiClient.decodeRequest,
  answer: (tokens) => ({ totalTokens: tokens }),
  forPassthrough: geminiClient.forPassthrough!,
};

/** POST /v1beta/models/{model}:countTokens: the Gemini API's own count, or a tokenizer's for other upstreams. */
export function countGeminiTokens(context: RouteContext): Promise<Response> {
  return handleTokenCount(context, countTokens);
}
