import { GatewayError } from '../../errors.js';
import { readText, type UpstreamResult } from './upstream-client.js';

/** Headers that tell a client when to retry; kept from an upstream error so SDKs back off right. */
const RETRY_HEADERS = /^(retry-after|retry-after-ms|x-should-retry|x-ratelimit-.*|anthropic-ratelimit-.*)$/i;

/**
 * Turns an upstream error response (OpenAI or Anthropic body) into a `GatewayError` with the
 * same status and the upstream message, keeping the retry headers.
 *
 * Exception: an upstream 401/403 is about the gateway's own upstream credentials, not the
 * client's key. Passing it on would tell the client its key is wrong (and OpenAI's message
 * quotes part of the upstream key), so it becomes a 502 with a neutral message.
 */
export async function upstreamError(result: UpstreamResult): Promise<GatewayError> {
  let text = '';
  try {
    text = await readText(result.body, 1024 * 1024);
  } catch {
    // The error body itself failed; the status still tells the story.
  }
  const parsed = parseErrorBody(text);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(result.headers)) {
    if (value !== undefined && RETRY_HEADERS.test(name)) headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }

  if (result.status === 401 || result.status === 403) {
    return new GatewayError({
      status: 502,
      type: 'upstream_error',
      message: 'The upstream rejected the gateway\u2019s credentials for this model.',
      code: 'upstream_auth_failed',
    });
  }
  const status = result.status >= 400 && result.status <= 599 ? result.status : 502;
  const contextOverflow = status === 400 && isContextOverflow(parsed.code, parsed.message);
  return new GatewayError({
    status,
    message: parsed.message ?? `The upstream answered with status ${result.status}.`,
    ...(parsed.type ? { type: parsed.type } : {}),
    param: parsed.param ?? null,
    code: contextOverflow ? 'context_length_exceeded' : (parsed.code ?? null),
    headers,
  });
}

interface ParsedError {
  message?: string;
  type?: string;
  code?: string;
  param?: string;
}

function parseErrorBody(text: string): ParsedError {
  try {
    const json = JSON.parse(text) as { error?: unknown; message?: unknown };
    const error = (typeof json.error === 'object' && json.error !== null ? json.error : json) as Record<string, unknown>;
    const pick = (value: unknown) => (typeof value === 'string' && value.length > 0 ? value : undefined);
    return {
      message: pick(error.message) ?? pick(json.message),
      type: pick(error.type),
      code: pick(error.code) ?? (typeof error.code === 'number' ? String(error.code) : undefined),
      param: pick(error.param),
    };
  } catch {
    return text.trim() ? { message: text.trim().slice(0, 500) } : {};
  }
}

/** Anthropic and OpenAI-compatible servers word context overflow differently; normalize the code. */
function isContextOverflow(code: string | undefined, message: string | undefined): boolean {
  if (code === 'context_length_exceeded') return true;
  return /context (length|window)|too many tokens|prompt is too long|maximum context/i.test(message ?? '');
}
