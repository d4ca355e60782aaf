import { GatewayError } from '../errors.js';
import type { ClientStyle } from '../http/client-style.js';
import type { KeyRecord, KeyStore } from './key-store.js';

/** Finds the caller's key where the route's clients send it, and its record. Error messages never repeat the key. */
export async function authenticate(request: Request, style: ClientStyle, keyStore: KeyStore, serverContext: unknown): Promise<KeyRecord> {
  const key = style.apiKey(request);
  if (!key) {
    throw new GatewayError({
      status: 401,
      type: 'invalid_request_error',
      message: style.missingKeyMessage,
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
