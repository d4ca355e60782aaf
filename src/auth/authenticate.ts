import { GatewayError } from '../errors.js';
import type { ErrorStyle } from '../http/error-response.js';
import type { KeyRecord, KeyStore } from './key-store.js';

/**
 * Finds the caller's key and its record. OpenAI routes take `Authorization: Bearer`; the
 * Anthropic route takes `x-api-key`, and Bearer too, because the current `@anthropic-ai/sdk`
 * sends its key that way. Error messages never repeat the key.
 */
export async function authenticate(request: Request, style: ErrorStyle, keyStore: KeyStore, serverContext: unknown): Promise<KeyRecord> {
  const key = style === 'anthropic' ? (request.headers.get('x-api-key') ?? bearerToken(request)) : bearerToken(request);
  if (!key) {
    throw new GatewayError({
      status: 401,
      type: 'invalid_request_error',
      message:
        style === 'anthropic'
          ? 'Missing API key: send it in the x-api-key header.'
          : "You didn't provide an API key. Send it as 'Authorization: Bearer YOUR_KEY'.",
      code: 'missing_api_key',
    });
  }
  const record = await keyStore.lookup(key, { request, serverContext });
  if (!record) {
    throw new GatewayError({ status: 401, type: 'invalid_request_error', message: 'Incorrect API key provided.', code: 'invalid_api_key' });
  }
  if (record.disabled) {
    throw new GatewayError({ status: 401, type: 'invalid_request_error', message: 'This API key is disabled.', code: 'api_key_disabled' });
  }
  return record;
}

function bearerToken(request: Request): string | undefined {
  const header = request.headers.get('authorization');
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}
