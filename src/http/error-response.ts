import { toPublicError } from '../errors.js';
import { anthropicErrorType } from '../protocols/messages/error-type.js';
import { jsonResponse } from './json-response.js';

/** Which error body a route's clients parse: OpenAI's or Anthropic's. */
export type ErrorStyle = 'openai' | 'anthropic';

/**
 * Renders any error as the route's error response. Unexpected errors are masked (the caller logs
 * the original); a `GatewayError` keeps its status, fields and headers (`retry-after`…).
 */
export function errorResponse(error: unknown, style: ErrorStyle): Response {
  const err = toPublicError(error);
  if (style === 'anthropic') {
    return jsonResponse({ type: 'error', error: { type: anthropicErrorType(err.status), message: err.message } }, err.status, err.headers);
  }
  return jsonResponse({ error: { message: err.message, type: err.type, param: err.param, code: err.code } }, err.status, err.headers);
}
