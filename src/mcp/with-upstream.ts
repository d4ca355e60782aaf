import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { McpRequestContext } from './mcp-session.js';

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
    await context.store.set(context.sessionId, record);
  }
  return result;
}

/** The configured servers this session reached when it started (a server down then stays out of it). */
export function liveServers(context: McpRequestContext): string[] {
  return Object.keys(context.options.servers).filter((server) => !context.record.upstream[server]?.down);
}
