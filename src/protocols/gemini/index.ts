import type { ClientCodec, UpstreamCodec } from '../codec.js';
import { withoutForeignSignatures } from './carried-signature.js';
import { decodeGeminiRequest, GEMINI_READ_FIELDS, refuseCachedContent } from './decode-request.js';
import { encodeGeminiResponse } from './encode-response.js';
import { GeminiStreamEncoder } from './encode-stream.js';
import { generateFields, streamFields } from './route-fields.js';
import { geminiRequestSchema } from './schema.js';
import { geminiTap } from './tap.js';
import { decodeGeminiResponse } from './decode-response.js';
import { geminiStreamDecoder } from './decode-stream.js';
import { encodeGeminiRequest } from './encode-request.js';
import { fromGeminiUsage } from './usage.js';

/** Google's Gemini API (`models/{model}:generateContent`, `:streamGenerateContent?alt=sse`), also Vertex AI's Gemini wire. */
export const geminiUpstream: UpstreamCodec = {
  protocol: 'gemini',
  encodeRequest: (request, options) => encodeGeminiRequest(request, options) as unknown as Record<string, unknown>,
  decodeResponse: decodeGeminiResponse,
  streamDecoder: geminiStreamDecoder,
  usageOf: fromGeminiUsage,
};

/** Google's Gemini API as its clients call the gateway: `POST /v1beta/models/{model}:generateContent`. */
export const geminiClient: ClientCodec = {
  protocol: 'gemini',
  endpoint: '/v1beta/models/{model}:generateContent',
  schema: geminiRequestSchema,
  routeFields: generateFields,
  decodeRequest: decodeGeminiRequest,
  readFields: GEMINI_READ_FIELDS,
  encodeResponse: encodeGeminiResponse,
  streamEncoder: (context) => new GeminiStreamEncoder(context),
  tap: geminiTap,
  forPassthrough: (body) => {
    refuseCachedContent(body.parsed);
    return withoutForeignSignatures(body);
  },
};

/** `POST /v1beta/models/{model}:streamGenerateContent?alt=sse`: the same body, answered as a stream. */
export const geminiStreamClient: ClientCodec = { ...geminiClient, endpoint: '/v1beta/models/{model}:streamGenerateContent', routeFields: streamFields };

export { geminiStyle } from './style.js';
export { refuseCachedContent } from './decode-request.js';
