import { echo } from '../http/echo.js';
import { GatewayError, invalidRequest } from '../errors.js';
import { jsonResponse } from '../http/json-response.js';
import type { RouteContext } from '../http/route.js';
import { asObject } from '../json.js';
import type { StoredResponseRequest } from '../providers/provider.js';
import type { ModelEntry } from '../routing/model.js';
import type { StoredResponse } from '../state/response-store.js';
import { callContext } from './upstream-call.js';

/**
 * `GET /v1/responses/{id}`, `GET /v1/responses/{id}/input_items` and `DELETE /v1/responses/{id}`:
 * a response the caller's key created, from the response store (models that keep state), or
 * from the Responses upstream that stored it on passthrough (the store says which). An unknown
 * id and another key's id get the same 404.
 */
export async function retrieveResponse(context: RouteContext): Promise<Response> {
  const record = await ownRecord(context);
  // Neither the store nor the upstream call (which reads a JSON answer) can replay the events.
  if (context.url.searchParams.get('stream') === 'true') {
    throw invalidRequest('Streaming a stored response is not supported: it is complete; retrieve it without `stream`.', 'stream', 'unsupported_parameter');
  }
  if (record.upstream) return jsonResponse(await atUpstream(context, record, 'retrieve'));
  const outputCount = record.outputCount ?? 0;
  const output = record.items.slice(record.items.length - outputCount);
  return jsonResponse({
    id: record.id,
    object: 'response',
    created_at: Math.floor(record.createdAt / 1000),
    status: 'completed',
    model: record.model,
    ...record.response,
    output,
  });
}

export async function listInputItems(context: RouteContext): Promise<Response> {
  const record = await ownRecord(context);
  if (record.upstream) return jsonResponse(await atUpstream(context, record, 'input_items'));
  const query = context.url.searchParams;
  const limit = query.has('limit') ? Number(query.get('limit')) : 20;
  if (!Number.isInteger(limit) || limit < 1 || limit > 100)
    throw invalidRequest(`Invalid 'limit': expected an integer from 1 to 100.`, 'limit', 'invalid_value');
  const order = query.get('order') ?? 'desc';
  if (order !== 'asc' && order !== 'desc') throw invalidRequest(`Invalid 'order': expected 'asc' or 'desc'.`, 'order', 'invalid_value');

  const inputs = record.items.slice(0, record.items.length - (record.outputCount ?? 0)).map((item, i) => asListedItem(item, i));
  const ordered = order === 'asc' ? inputs : inputs.reverse();
  const after = query.get('after');
  let start = 0;
  if (after !== null) {
    const at = ordered.findIndex((item) => item.id === after);
    if (at < 0) throw new GatewayError({ status: 404, message: `Item with id '${echo(after)}' not found.`, param: 'after', code: 'item_not_found' });
    start = at + 1;
  }
  const data = ordered.slice(start, start + limit);
  return jsonResponse({ object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: start + limit < ordered.length });
}

export async function deleteResponse(context: RouteContext): Promise<Response> {
  const record = await ownRecord(context);
  const store = context.options.responseStore!;
  if (record.upstream) {
    const answer = await atUpstream(context, record, 'delete');
    await store.delete?.(record.id);
    return jsonResponse(answer);
  }
  if (!store.delete) throw new GatewayError({ status: 501, message: 'The response store of this gateway cannot delete responses.', code: 'not_implemented' });
  await store.delete(record.id);
  return jsonResponse({ id: record.id, object: 'response', deleted: true });
}

/** The stored record of the id in the path, when the caller's key made it; 404 otherwise. */
async function ownRecord(context: RouteContext): Promise<StoredResponse> {
  const id = context.params.id!;
  const record = await context.options.responseStore?.get(id);
  if (!record || record.keyId !== context.key.id) {
    throw new GatewayError({ status: 404, message: `Response with id '${echo(id)}' not found.`, param: 'response_id', code: 'response_not_found' });
  }
  return record;
}

/** Asks the deployment that stored the response; its answer (or error) is the client's. */
async function atUpstream(context: RouteContext, record: StoredResponse, action: StoredResponseRequest['action']): Promise<unknown> {
  const { options } = context;
  const where = record.upstream!;
  const provider = options.providers[where.provider];
  if (!provider?.text?.storedResponse) {
    throw new GatewayError({
      status: 404,
      message: `Response with id '${record.id}' not found: the upstream that stored it is no longer configured.`,
      param: 'response_id',
      code: 'response_not_found',
    });
  }
  const model: ModelEntry = options.catalog.get(record.model) ?? { id: record.model, provider: where.provider };
  return provider.text.storedResponse({ action, id: record.id, query: context.url.searchParams }, callContext(context, model));
}

/** An input item as the API lists it: a `type` and an `id`, message content as parts. */
function asListedItem(raw: unknown, index: number): Record<string, unknown> & { id: string } {
  const item = asObject(raw) ?? {};
  const type = item.type ?? (item.role !== undefined ? 'message' : undefined);
  const listed: Record<string, unknown> = { ...item, ...(type !== undefined ? { type } : {}) };
  if (type === 'message' && typeof item.content === 'string') {
    listed.content = [{ type: item.role === 'assistant' ? 'output_text' : 'input_text', text: item.content }];
  }
  return { ...listed, id: typeof item.id === 'string' && item.id !== '' ? item.id : `item_${index}` };
}
