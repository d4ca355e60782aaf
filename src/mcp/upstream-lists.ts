import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { McpRequestContext } from './mcp-session.js';
import { liveServers, withUpstream } from './with-upstream.js';

/** Per upstream and list: an upstream that pages forever cannot grow the gateway's memory. */
export const LIST_BOUNDS = { pages: 100, items: 10_000 };

/** Where a list result says which upstreams were cut at `LIST_BOUNDS`. */
export const TRUNCATED_META = 'infergate/truncated';

/** One page of an upstream list: its items (`tools`, `prompts`…) and the cursor of the next. */
export interface Page<T> {
  items: T[];
  nextCursor?: string | undefined;
}

export interface Gathered<T> {
  items: T[];
  truncated: boolean;
}

/** Every page of one upstream list, up to `LIST_BOUNDS`. */
export async function allPages<T>(page: (cursor: string | undefined) => Promise<Page<T>>): Promise<Gathered<T>> {
  const items: T[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < LIST_BOUNDS.pages; pages++) {
    const answer = await page(cursor);
    items.push(...answer.items.slice(0, LIST_BOUNDS.items - items.length));
    cursor = answer.nextCursor;
    if (!cursor) return { items, truncated: false };
    if (items.length >= LIST_BOUNDS.items) break;
  }
  return { items, truncated: true };
}

/**
 * One list gathered from every live upstream of the session at once (or of `servers`): `list`
 * answers a server's items as clients see them (renamed, scoped). An upstream that fails is left
 * out, never failing the others; those cut at the bound are named in the result's `_meta`.
 */
export async function listFromEveryServer<T>(
  context: McpRequestContext,
  field: string,
  list: (server: string, client: Client) => Promise<Gathered<T>>,
  servers: string[] = liveServers(context),
): Promise<Record<string, unknown>> {
  const lists = await Promise.allSettled(servers.map((server) => withUpstream(context, server, context.signal, (client) => list(server, client))));
  const items: T[] = [];
  const truncated: string[] = [];
  for (const [index, answer] of lists.entries()) {
    if (answer.status !== 'fulfilled') continue;
    items.push(...answer.value.items);
    if (answer.value.truncated) truncated.push(servers[index]!);
  }
  return { [field]: items, ...(truncated.length > 0 ? { _meta: { [TRUNCATED_META]: truncated } } : {}) };
}
