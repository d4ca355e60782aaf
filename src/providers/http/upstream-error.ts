import { GatewayError, upstreamAuthFailed, upstreamInvalidResponse, upstreamReportedError } from '../../errors.js';
import { asObject, parseJson } from '../../json.js';
import { readText, type UpstreamResult } from './upstream-client.js';

/**
 * Headers that tell a client when to retry; kept from an upstream error so SDKs back off right
 * (the OpenAI and Anthropic SDKs read these three). The upstream's `x-ratelimit-*` and
 * `anthropic-ratelimit-*` describe the operator's account (its limits, what is left of them), not
 * the tenant's, and stay behind; a key's own limits send their `x-ratelimit-*` (`admission.ts`).
 */
const RETRY_HEADERS = /^(retry-after|retry-after-ms|x-should-retry)$/i;

/** The retry headers of an upstream answer, names in lower case. */
export function retryHeadersOf(upstream: UpstreamResult['headers']): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(upstream)) {
    if (value !== undefined && RETRY_HEADERS.test(name)) headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return headers;
}

/**
 * Turns an upstream error response (OpenAI or Anthropic body) into a `GatewayError` with the
 * same status, keeping the retry headers. What the client reads of it:
 * - a 4xx is about the request: the upstream's message, type, code and param, as SDKs and agents
 *   read them (a context overflow's wording, `param`), with credentials and host names blanked;
 * - a 5xx is about the upstream: its status, and its type and code when they are plain tokens
 *   (`overloaded_error`), with a fixed message; its own words (stack traces, internal addresses)
 *   go to the operator's log only (`plainServerError`);
 * - an upstream 401/403 is about the gateway's own upstream credentials, not the client's key.
 *   Passing it on would tell the client its key is wrong (and OpenAI's message quotes part of the
 *   upstream key), so it becomes a 502 with a neutral message.
 */
export async function upstreamError(result: UpstreamResult): Promise<GatewayError> {
  let text = '';
  try {
    text = await readText(result.body, 1024 * 1024);
  } catch {
    // The error body itself failed; the status still tells the story.
  }
  const parsed = redacted(parseErrorBody(text), result.redact);
  const headers = retryHeadersOf(result.headers);

  // Google says when to retry in the body (`RetryInfo.retryDelay`), not in a header.
  const retryDelay = headers['retry-after'] === undefined ? googleRetryDelay(text) : undefined;
  if (retryDelay !== undefined) headers['retry-after'] = retryDelay;

  if (result.status === 401 || result.status === 403) {
    return upstreamAuthFailed();
  }
  const status = result.status >= 400 && result.status <= 599 ? result.status : 502;
  const contextOverflow = status === 400 && isContextOverflow(parsed.code, parsed.message);
  return plainServerError(
    new GatewayError({
      status,
      message: parsed.message ?? `The upstream answered with status ${result.status}.`,
      type: parsed.type,
      param: parsed.param ?? null,
      code: contextOverflow ? 'context_length_exceeded' : (parsed.code ?? null),
      headers,
    }),
  );
}

/**
 * An upstream's 5xx as a client sees it: the status, the type and code when they are plain
 * tokens, a fixed message; the upstream's message is the error's `detail`, logged with the
 * request id for the operator, never sent.
 * Anything else is returned as it is.
 */
export function plainServerError(error: GatewayError): GatewayError {
  if (error.status < 500) return error;
  const token = (value: string | null) => (value !== null && /^[\w.-]{1,64}$/.test(value) ? value : undefined);
  return new GatewayError({
    status: error.status,
    message: `The upstream answered with status ${error.status}.`,
    type: token(error.type),
    code: token(error.code),
    headers: error.headers,
    detail: error.message,
    cause: error.cause,
  });
}

/**
 * A 200 whose body is an error after all: some OpenAI-compatible servers and proxies answer
 * `200 {"error":{…}}`, Anthropic-style ones `200 {"type":"error",…}`. Returns it as a 502 that
 * keeps the upstream's message, or undefined for a real answer. Answers always carry an `id`,
 * which tells them from an error body (an Ark task that failed has both, and is an answer).
 */
export function errorInAnswer(json: unknown, redact?: (text: string) => string): GatewayError | undefined {
  const body = asObject(json);
  if (!body) return undefined;
  const isError = body.type === 'error' || (body.id === undefined && typeof body.error === 'object' && body.error !== null);
  if (!isError) return undefined;
  const parsed = redacted(errorFields(body), redact);
  return upstreamReportedError(parsed.message ?? 'The upstream answered with an error.', parsed.code);
}

/**
 * A stream request answered with a JSON or HTML body (an error a proxy or server sent with a
 * 200, or a page): thrown as a 502 with the upstream's message when it has one, before anything
 * is streamed. Other types pass: some servers label real event streams loosely.
 */
export async function expectEventStream(result: UpstreamResult): Promise<void> {
  const header = result.headers['content-type'];
  const type = (Array.isArray(header) ? header[0] : header) ?? '';
  if (!/^\s*(application\/json|text\/html)/i.test(type)) return;
  let text = '';
  try {
    text = await readText(result.body, 1024 * 1024);
  } catch {
    // The body failed too; the type says enough.
  }
  const parsed = redacted(parseErrorBody(text), result.redact);
  throw upstreamInvalidResponse(
    type.includes('json') && parsed.message ? parsed.message : 'The upstream answered a stream request with something other than an event stream.',
  );
}

/** The error with its message redacted (see `UpstreamResult.redact`); the same error when nothing changes. */
export function redactedError(error: GatewayError, redact: ((text: string) => string) | undefined): GatewayError {
  const message = redact ? redact(error.message) : error.message;
  if (message === error.message) return error;
  const { status, type, param, code, headers } = error;
  return new GatewayError({ status, type, param, code, headers, message, cause: error.cause });
}

interface ParsedError {
  message?: string | undefined;
  type?: string | undefined;
  code?: string | undefined;
  param?: string | undefined;
}

function parseErrorBody(text: string): ParsedError {
  const json = parseJson(text);
  if (json === undefined) return text.trim() ? { message: text.trim().slice(0, 500) } : {};
  return typeof json === 'object' && json !== null ? errorFields(json as { error?: unknown; message?: unknown }) : {};
}

/** The upstream's own words with the provider's credentials and address blanked out. */
function redacted(parsed: ParsedError, redact: ((text: string) => string) | undefined): ParsedError {
  if (!redact) return parsed;
  const out: ParsedError = {};
  for (const [name, value] of Object.entries(parsed) as [keyof ParsedError, string | undefined][]) if (value !== undefined) out[name] = redact(value);
  return out;
}

/** The fields of an OpenAI (`{error:{…}}`) or Anthropic (`{type:"error",error:{…}}`) error body. */
function errorFields(json: { error?: unknown; message?: unknown }): ParsedError {
  const error = (typeof json.error === 'object' && json.error !== null ? json.error : json) as Record<string, unknown>;
  const pick = (value: unknown) => (typeof value === 'string' && value.length > 0 ? value : undefined);
  return {
    message: pick(error.message) ?? pick(json.message),
    type: pick(error.type),
    code: pick(error.code) ?? (typeof error.code === 'number' ? String(error.code) : undefined),
    param: pick(error.param),
  };
}

/** Whole seconds of a Google error's `RetryInfo` detail (`"retryDelay": "7s"`, `"0.5s"` rounded up), if it has one. */
function googleRetryDelay(text: string): string | undefined {
  if (!text.includes('RetryInfo')) return undefined;
  const details = asObject(asObject(parseJson(text))?.error)?.details;
  if (!Array.isArray(details)) return undefined;
  for (const detail of details) {
    const delay = asObject(detail)?.retryDelay;
    const seconds = typeof delay === 'string' ? /^(\d+(?:\.\d+)?)s$/.exec(delay)?.[1] : undefined;
    if (seconds !== undefined) return String(Math.ceil(Number(seconds)));
  }
  return undefined;
}

/** Anthropic and OpenAI-compatible servers word context overflow differently; normalize the code. */
function isContextOverflow(code: string | undefined, message: string | undefined): boolean {
  if (code === 'context_length_exceeded') return true;
  return /context (length|window)|too many tokens|prompt is too long|maximum context/i.test(message ?? '');
}
