import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { LoggingLevelSchema, LoggingMessageNotificationSchema, SetLevelRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { ClientRequestExtra } from './call-notifications.js';
import type { McpRequestContext } from './mcp-session.js';

/** Levels from the least severe (`debug`) to the most (`emergency`). */
const LEVELS: readonly string[] = LoggingLevelSchema.options;

/**
 * `logging/setLevel`: the level is kept in the session record (the SDK's own handler keeps it in
 * the memory of a server that lives for one request), and the gateway filters what it forwards.
 */
export function handleLogLevel(server: Server, context: McpRequestContext): void {
  server.setRequestHandler(SetLevelRequestSchema, async ({ params }) => {
    context.record.logLevel = params.level;
    await context.store.update(context.sessionId, context.record);
    return {};
  });
}

/**
 * Has the log messages the upstream sends during one request forwarded to the client, on that
 * request's stream, at or above the session's level. Only with a client of this request alone
 * (HTTP): a notification handler gets the message without the request it belongs to, so on a
 * client shared by concurrent requests (stdio) a message could reach another key's session;
 * those are dropped.
 */
export function forwardLogs(client: Client, context: McpRequestContext, extra: ClientRequestExtra): void {
  if (!(client.transport instanceof StreamableHTTPClientTransport)) return;
  client.setNotificationHandler(LoggingMessageNotificationSchema, async (notification) => {
    if (!atOrAbove(notification.params.level, context.record.logLevel)) return;
    await extra.sendNotification(notification).catch(() => {});
  });
}

function atOrAbove(level: string, threshold: string | undefined): boolean {
  const floor = threshold === undefined ? -1 : LEVELS.indexOf(threshold);
  return LEVELS.indexOf(level) >= floor;
}
