import { toPublicError } from '../errors.js';
import type { ClientStyle } from './client-style.js';
import { jsonResponse } from './json-response.js';

/**
 * Renders any error as the route's error response. Unexpected errors are masked (the caller logs
 * the original); a `GatewayError` keeps its status, fields and headers (`retry-after`…).
 */
export function errorResponse(error: unknown, style: ClientStyle, requestId: string): Response {
  const err = toPublicError(error);
  return jsonResponse(style.errorBody(err, requestId), err.status, { ...style.errorHeaders?.(err), ...err.headers });
}
