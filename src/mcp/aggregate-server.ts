import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CancelledNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { handleLogLevel } from './call-logs.js';
import { inFlightCalls } from './in-flight-calls.js';
import type { McpRequestContext } from './mcp-session.js';
import { passThroughValidator } from './pass-through-validator.js';
import { handlePrompts } from './prompts-handlers.js';
import { handleResources } from './resources-handlers.js';
import { handleTools } from './tools-handlers.js';

/**
 * The gateway's MCP server for one request of one session: the upstreams' tools as
 * `<server>__<tool>` (tools-handlers.ts) and prompts as `<server>__<prompt>`, their log messages
 * during a call at the session's level (call-logs.ts), and cancellations reaching calls that run
 * here or on another instance, and the upstreams' resources under their own URIs
 * (resources-handlers.ts). It advertises only what it forwards: no subscriptions, no list changes.
 */
export function aggregateServer(context: McpRequestContext): Server {
  // The low-level Server (the SDK marks it deprecated for servers of their own): a proxy needs its raw handlers.
  const server = new Server(
    { name: 'infergate', version: '1' },
    {
      capabilities: { tools: { listChanged: false }, prompts: { listChanged: false }, resources: { listChanged: false }, logging: {} },
      jsonSchemaValidator: passThroughValidator,
    },
  );
  handleTools(server, context);
  handlePrompts(server, context);
  handleResources(server, context);
  handleLogLevel(server, context);
  // The call it names runs under another request's server: found by session and id, here or on
  // another instance sharing the session store.
  server.setNotificationHandler(CancelledNotificationSchema, ({ params }) => {
    const { requestId, reason } = params;
    if (requestId === undefined || inFlightCalls(context.upstreams).cancel(context.sessionId, requestId, reason)) return;
    context.store.publishCancel?.({ sessionId: context.sessionId, requestId, ...(typeof reason === 'string' ? { reason: reason.slice(0, 500) } : {}) });
  });
  return server;
}
