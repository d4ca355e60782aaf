import type { ClientStyle } from '../../http/client-style.js';
import type { GatewayError } from '../../errors.js';

/**
 * Gemini's clients (`@google/genai`, gemini-cli, LangChain's Google package): the key in
 * `x-goog-api-key` or the `key` query parameter, and Google's error body
 * `{ error: { code, message, status, details } }` (https://cloud.google.com/apis/design/errors).
 * Google's SDKs show `error.message`, so a 400's message names the field itself; the field path
 * is in a `google.rpc.BadRequest` detail too, and a 429's retry delay in `google.rpc.RetryInfo`,
 * where gemini-cli reads it.
 */
export const geminiStyle: ClientStyle = {
  name: 'gemini',
  apiKey: (request) => request.headers.get('x-goog-api-key') ?? keyParam(request.url),
  missingKeyMessage: 'Missing API key: send it in the x-goog-api-key header or the key query parameter.',
  errorBody: geminiErrorBody,
};

export function geminiErrorBody(error: GatewayError): { error: Record<string, unknown> } {
  const details: Record<string, unknown>[] = [];
  if (error.code) details.push({ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: error.code.toUpperCase(), domain: 'infergate' });
  if (error.param)
    details.push({ '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: [{ field: error.param, description: error.message }] });
  const retryAfter = Number(error.headers['retry-after']);
  if (error.status === 429 && Number.isFinite(retryAfter) && retryAfter >= 0) {
    details.push({ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${retryAfter}s` });
  }
  return { error: { code: error.status, message: error.message, status: googleStatus(error.status), ...(details.length > 0 ? { details } : {}) } };
}

/** The canonical status name Google pairs with an HTTP status (google.rpc.Code). */
export function googleStatus(httpStatus: number): string {
  switch (httpStatus) {
    case 400:
    case 405:
    case 413:
    case 415:
    case 422:
      return 'INVALID_ARGUMENT';
    case 401:
      return 'UNAUTHENTICATED';
    case 403:
      return 'PERMISSION_DENIED';
    case 404:
      return 'NOT_FOUND';
    case 409:
      return 'ABORTED';
    case 429:
      return 'RESOURCE_EXHAUSTED';
    case 499:
      return 'CANCELLED';
    case 501:
      return 'UNIMPLEMENTED';
    case 502:
    case 503:
      return 'UNAVAILABLE';
    case 504:
      return 'DEADLINE_EXCEEDED';
    default:
      return httpStatus >= 500 ? 'INTERNAL' : 'FAILED_PRECONDITION';
  }
}

/** `?key=` as Google's REST API takes it; the URL of a request that reached a route always parses. */
function keyParam(url: string): string | undefined {
  const at = url.indexOf('?');
  if (at < 0) return undefined;
  return new URLSearchParams(url.slice(at + 1)).get('key') || undefined;
}
