import { MAX_BATCH_SIZE } from '@modelcontextprotocol/sdk/server/requestBody.js';
import { isJsonContentType } from '@modelcontextprotocol/sdk/shared/mediaType.js';
import { type JSONRPCMessage, JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import { GatewayError } from '../errors.js';
import { readJsonValue } from '../http/read-json.js';
import type { RouteContext } from '../http/route.js';
import { badMessage } from './mcp-errors.js';

/**
 * Most keys a body may hold in the first three levels of its messages (the message; its `params`
 * or `result`; `params.arguments` and `params._meta`): the objects the SDK's zod schemas copy key
 * by key, about 3 µs a key for each of the three passes a request gets (the gateway's check, the
 * transport's, the server's handler), so 900,000 keys in `arguments` held the event loop some
 * 10 s. Deeper values (a tool argument's own content) are not walked by them. Real tool calls
 * name a few dozen arguments.
 */
const MAX_SHALLOW_KEYS = 10_000;

/** A POST's JSON-RPC messages: one, or a batch (`batch` true, even of one). */
export interface PostedMessages {
  body: unknown;
  messages: JSONRPCMessage[];
  batch: boolean;
}

/**
 * Reads a POST to `/mcp` before anything is done for it (no session made, no upstream called), in
 * the order and words of the SDK's transport: 406 unless `Accept` lists both `application/json`
 * and `text/event-stream`; 415 unless the body is JSON; then the gateway's body limits (413 past
 * `limits.jsonBodyBytes`, 408 for a body trickled in, nesting and value count bounded: the SDK
 * validates messages with zod, so they reach it bounded); 400 -32700 for what is not JSON; 400
 * -32600 for what is not a JSON-RPC 2.0 message by MCP's schema, or an empty or oversized batch.
 */
export async function readMessages({ request, options }: RouteContext): Promise<PostedMessages> {
  const accept = request.headers.get('accept');
  if (!accept?.includes('application/json') || !accept.includes('text/event-stream')) {
    throw new GatewayError({
      status: 406,
      message: 'Not Acceptable: Client must accept both application/json and text/event-stream',
      code: 'not_acceptable',
    });
  }
  if (!isJsonContentType(request.headers.get('content-type'))) {
    throw new GatewayError({ status: 415, message: 'Unsupported Media Type: Content-Type must be application/json', code: 'unsupported_media_type' });
  }
  const body = await readJsonValue(request, options.limits.jsonBodyBytes, options.limits.requestBodyTimeoutMs);
  const batch = Array.isArray(body);
  const items: unknown[] = batch ? body : [body];
  if (batch && items.length === 0) throw badMessage('Invalid Request: an empty batch holds no message', 'invalid_message');
  if (items.length > MAX_BATCH_SIZE) throw badMessage(`Invalid Request: Batch must not exceed ${MAX_BATCH_SIZE} messages`, 'invalid_message');
  if (shallowKeys(items, 4, MAX_SHALLOW_KEYS) > MAX_SHALLOW_KEYS) {
    throw new GatewayError({
      status: 400,
      message: `Invalid Request: more than ${MAX_SHALLOW_KEYS} keys in the messages, their params and params.arguments`,
      code: 'too_many_keys',
    });
  }
  const messages = items.map((item, index) => {
    const parsed = JSONRPCMessageSchema.safeParse(item);
    if (parsed.success) return parsed.data;
    const where = batch ? ` (message ${index} of the batch)` : '';
    throw badMessage(`Invalid Request: not a JSON-RPC 2.0 request, notification or response${where}`, 'invalid_message');
  });
  return { body, messages, batch };
}

/** The keys of the objects `levels` deep in `value` (arrays are walked through, not counted), stopping once past `max`. */
function shallowKeys(value: unknown, levels: number, max: number): number {
  if (levels === 0 || typeof value !== 'object' || value === null) return 0;
  let count = 0;
  if (Array.isArray(value)) {
    for (const item of value) {
      count += shallowKeys(item, levels - 1, max - count);
      if (count > max) break;
    }
    return count;
  }
  for (const key in value) {
    count += 1 + shallowKeys((value as Record<string, unknown>)[key], levels - 1, max - count);
    if (count > max) break;
  }
  return count;
}
