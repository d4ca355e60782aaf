import { jsonResponse } from '../http/json-response.js';
import type { RouteContext } from '../http/route.js';

/** GET /v1/models: only what the caller's key may use. */
export async function listModels({ options, key }: RouteContext): Promise<Response> {
  return jsonResponse({ object: 'list', data: options.catalog.list(key, { messagesEnabled: options.messagesEnabled }) });
}
