import type { GatewayError } from '../../errors.js';
import { parseObject } from '../../json.js';
import { bedrockException } from '../../protocols/converse/exception.js';
import { readText, type UpstreamResult } from '../http/upstream-client.js';
import { redactedError } from '../http/upstream-error.js';

/** Headers that tell a client when to retry, kept from a Bedrock error. */
const RETRY_HEADERS = /^(retry-after|retry-after-ms|x-ratelimit-.*)$/i;

/**
 * A Bedrock error answer (`{"message": …}`, the exception named by `x-amzn-ErrorType:
 * ThrottlingException:http://…`) as the `GatewayError` a client sees: see `bedrockException`.
 */
export async function bedrockError(result: UpstreamResult): Promise<GatewayError> {
  let text = '';
  try {
    text = await readText(result.body, 1024 * 1024);
  } catch {
    // The status and the header still tell the story.
  }
  const body = parseObject(text);
  const message = typeof body?.message === 'string' ? body.message : typeof body?.Message === 'string' ? body.Message : text.trim().slice(0, 500);
  const typeHeader = result.headers['x-amzn-errortype'];
  const name =
    (Array.isArray(typeHeader) ? typeHeader[0] : typeHeader)?.split(':')[0] ?? (typeof body?.__type === 'string' ? body.__type.split('#').pop() : '') ?? '';
  const headers: Record<string, string> = {};
  for (const [header, value] of Object.entries(result.headers)) {
    if (value !== undefined && RETRY_HEADERS.test(header)) headers[header.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return redactedError(bedrockException(name, message, result.status, headers), result.redact);
}
