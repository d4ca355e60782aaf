import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { McpRequestContext } from './mcp-session.js';
import { mayReach } from './tool-scope.js';

/**
 * Runs `work` with a client of upstream `server` in this session's upstream session; when the
 * upstream renewed it (it had forgotten the old one), the session record keeps the new one.
 */
export async function withUpstream<T>(context: McpRequestContext, server: string, signal: AbortSignal, work: (client: Client) => Promise<T>): Promise<T> {
  const { record } = context;
  const before = record.upstream[server];
  const { result, state } = await context.upstreams.use(server, before, signal, work);
  if (state.sessionId !== before?.sessionId) {
    record.upstream[server] = state;
    await context.store.update(context.sessionId, record);
  }
  return result;
}

/**
 * The configured servers the key may reach that were not down when this session started (a
 * server added to the key's scope since is initialized on first use).
 */
export function liveServers(context: McpRequestContext): string[] {
  return Object.keys(context.options.servers).filter((server) => mayReach(context.key, server) && !context.record.upstream[server]?.down);
}
