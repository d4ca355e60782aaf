import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CancelledNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { inFlightCalls } from './in-flight-calls.js';
import type { McpRequestContext } from './mcp-session.js';
import { handleTools } from './tools-handlers.js';

/**
 * The gateway's MCP server for one request of one session: the upstreams' tools under
 * `<server>__<tool>` (tools-handlers.ts), and cancellations reaching calls that run on this
 * instance. It advertises only what it forwards.
 */
export function aggregateServer(context: McpRequestContext): Server {
  // The low-level Server (the SDK marks it deprecated for servers of their own): a proxy needs its raw handlers.
  const server = new Server({ name: 'infergate', version: '1' }, { capabilities: { tools: { listChanged: false } } });
  handleTools(server, context);
  // The call it names runs under another request's server: found by session and id.
  server.setNotificationHandler(CancelledNotificationSchema, ({ params }) => {
    if (params.requestId !== undefined) inFlightCalls(context.upstreams).cancel(context.sessionId, params.requestId, params.reason);
  });
  return server;
}
