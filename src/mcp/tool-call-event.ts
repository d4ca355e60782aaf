import type { McpToolCall } from './tool-call.js';

/**
 * One per `tools/call` through `/mcp`, whatever its outcome: a tool call's usage event, told to the
 * plugins' `onToolCall` stage (the access log, spans, metrics, `hooks.onToolCall`). Its own kind of
 * event, not a `UsageEvent`: a tool call uses no tokens and costs nothing, so spend and the usage
 * store never see it (the request log keeps it as a row of its own, `ToolCallRow`). Ids and sizes
 * only: never an upstream credential, and the arguments only with `mcp.captureArguments`.
 */
export interface McpToolCallEvent extends McpToolCall {
  requestId: string;
  keyId: string;
  /** The key's group (`KeyRecord.group`, `default` when unset). */
  keyGroup: string;
  /** The gateway's MCP session (`mcp-session-id`), not an upstream's. */
  sessionId: string;
  /** The MCP protocol version the session negotiated at `initialize`. */
  protocolVersion: string;
  /** ms since epoch when the gateway's MCP server took the call. */
  startedAt: number;
}
