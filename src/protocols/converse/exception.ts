import { GatewayError, upstreamAuthFailed } from '../../errors.js';

/**
 * Bedrock's exceptions, named by the `x-amzn-ErrorType` header of an error answer or the
 * `:exception-type` header of an event-stream message (lower camel case there), with the status
 * a client gets. Failures of the model behind Bedrock (424, 500) are the upstream failing: 502.
 */
const STATUS: Record<string, number> = {
  validationexception: 400,
  throttlingexception: 429,
  servicequotaexceededexception: 429,
  modelnotreadyexception: 503,
  serviceunavailableexception: 503,
  resourcenotfoundexception: 404,
  modeltimeoutexception: 504,
  modelerrorexception: 502,
  modelstreamerrorexception: 502,
  internalserverexception: 502,
};

/** Bedrock sends no retry delay with a throttle; SDKs back off on this one instead of guessing. */
export const THROTTLE_RETRY_AFTER_SECONDS = '1';

/**
 * A Bedrock exception as the `GatewayError` a client sees: its status, Bedrock's message, the
 * exception's name as `code`, the field a validation message names as `param`, and a
 * `retry-after` on a throttle. Access and signature failures are the gateway's credentials, not
 * the client's: a 502 that keeps Bedrock's words out.
 */
export function bedrockException(name: string, message: string | undefined, status?: number, headers: Record<string, string> = {}): GatewayError {
  const key = name.toLowerCase();
  if (key === 'accessdeniedexception' || key === 'unrecognizedclientexception' || key === 'invalidsignatureexception' || key === 'expiredtokenexception') {
    return upstreamAuthFailed();
  }
  const mapped = STATUS[key] ?? (status !== undefined && status >= 400 && status <= 599 ? status : 502);
  if (mapped === 401 || mapped === 403) return upstreamAuthFailed();
  const text = message && message !== '' ? message : `The upstream failed (${name || 'unknown error'}).`;
  const retry = mapped === 429 && headers['retry-after'] === undefined ? { 'retry-after': THROTTLE_RETRY_AFTER_SECONDS } : {};
  return new GatewayError({
    status: mapped,
    message: text,
    code: name || null,
    param: mapped === 400 ? validationParam(text) : null,
    headers: { ...headers, ...retry },
    ...(mapped === 429 ? { type: 'rate_limit_exceeded' } : {}),
  });
}

/** Converse fields with a client-side name every client protocol knows. */
const CLIENT_FIELDS: [RegExp, string][] = [
  [/^inferenceConfig\.maxTokens$/, 'max_tokens'],
  [/^inferenceConfig\.temperature$/, 'temperature'],
  [/^inferenceConfig\.topP$/, 'top_p'],
  [/^inferenceConfig\.stopSequences/, 'stop'],
  [/^toolConfig/, 'tools'],
  [/^(messages|system)\b/, 'messages'],
];

/**
 * The field a Bedrock validation message names: `Value '0' at 'inferenceConfig.maxTokens' failed
 * to satisfy constraint…`, `The text field in the ContentBlock object at messages.0.content.0 is blank`, `extraneous key
 * [foo] is not permitted`. Converse paths map to the client's field where there is one.
 */
export function validationParam(message: string): string | null {
  const path =
    /\bat '([A-Za-z0-9_.[\]]+)'/.exec(message)?.[1] ??
    /\bat ((?:messages|system|toolConfig|inferenceConfig|additionalModelRequestFields)\b[A-Za-z0-9_.[\]]*)/.exec(message)?.[1] ??
    /extraneous key \[([^\]]+)\]/.exec(message)?.[1];
  if (path === undefined) return null;
  for (const [pattern, field] of CLIENT_FIELDS) if (pattern.test(path)) return field;
  return path;
}
