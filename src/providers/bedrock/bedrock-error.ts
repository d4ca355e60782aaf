import type { GatewayError } from '../../errors.js';
import { parseObject } from '../../json.js';
import { bedrockException } from '../../protocols/converse/exception.js';
import { readText, type UpstreamResult } from '../http/upstream-client.js';
import { plainServerError, redactedError, retryHeadersOf } from '../http/upstream-error.js';

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
  const error = redactedError(bedrockException(name, message, result.status, retryHeadersOf(result.headers)), result.redact);
  // A 403 becomes the gateway's own 502 (credentials): only the upstream's 5xx are made plain.
  return result.status >= 500 ? plainServerError(error) : error;
}
