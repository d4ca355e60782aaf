import { GatewayError, isAbortError, isGatewayError } from '../errors.js';
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
  const record = await lookup(keyStore, key, request, serverContext);
  if (!record) {
    throw new GatewayError({ status: 401, type: 'invalid_request_error', message: 'Incorrect API key provided.', code: 'invalid_api_key' });
  }
  if (record.disabled) {
    throw new GatewayError({ status: 401, type: 'invalid_request_error', message: 'This API key is disabled.', code: 'api_key_disabled' });
  }
  return record;
}

/**
 * The store's answer. A store that cannot answer (its database unreachable) fails closed: the
 * key is refused with a 503 the client may retry, never let through, and the cause is logged.
 * A `GatewayError` a host's store throws on purpose (a 403) is answered as it is.
 */
async function lookup(keyStore: KeyStore, key: string, request: Request, serverContext: unknown): Promise<KeyRecord | undefined> {
  try {
    return await keyStore.lookup(key, { request, serverContext });
  } catch (error) {
    if (isGatewayError(error) || (isAbortError(error) && request.signal.aborted)) throw error;
    throw new GatewayError({
      status: 503,
      message: 'API keys cannot be checked right now; try again shortly.',
      code: 'key_store_unavailable',
      headers: { 'retry-after': '1' },
      detail: `key store: ${error instanceof Error ? error.message : String(error)}`,
      cause: error,
    });
  }
}
