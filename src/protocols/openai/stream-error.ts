import { GatewayError, upstreamStreamCut } from '../../errors.js';
import { asObject } from '../../json.js';

/**
 * An OpenAI-style error object (Chat `{"error":…}` chunk, Responses `error` event or failed
 * response) → `GatewayError` with the upstream message and a status from its code or type.
 */
export function openAiStreamError(raw: unknown, fallback = 'The upstream failed while streaming'): GatewayError {
  const error = asObject(raw) ?? {};
  const message = typeof raw === 'string' && raw !== '' ? raw : typeof error.message === 'string' && error.message !== '' ? error.message : fallback;
  const code = typeof error.code === 'string' ? error.code : null;
  const type = typeof error.type === 'string' && error.type !== '' ? error.type : undefined;
  const numeric = [error.status, error.code].find((value) => typeof value === 'number' && value >= 400 && value <= 599) as number | undefined;
  const status = numeric ?? statusFor([code, type]);
  return new GatewayError({
    status,
    message,
    type,
    code,
    param: typeof error.param === 'string' ? error.param : null,
    // Retrying an exhausted quota is pointless; the SDKs honour this header.
    headers: code === 'insufficient_quota' || type === 'insufficient_quota' ? { 'x-should-retry': 'false' } : undefined,
  });
}

function statusFor(keys: (string | null | undefined)[]): number {
  for (const key of keys) {
    switch (key) {
      case 'rate_limit_exceeded':
      case 'rate_limit_error':
      case 'insufficient_quota':
      case 'requests':
      case 'tokens':
        return 429;
      case 'server_overloaded':
      case 'engine_overloaded':
      case 'overloaded_error':
      case 'slow_down':
        return 503;
      case 'context_length_exceeded':
      case 'invalid_prompt':
      case 'invalid_request_error':
        return 400;
    }
  }
  return 502;
}

export function streamEndedEarly(): GatewayError {
  return upstreamStreamCut('upstream stream ended early');
}
