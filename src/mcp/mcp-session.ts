import type { KeyRecord } from '../auth/key-store.js';
import type { McpOptions } from './mcp-options.js';
import type { McpSessionRecord, McpSessionStore } from './session-store.js';
import type { McpToolCall } from './tool-call.js';
import type { McpUpstreams } from './upstreams.js';

/** What `/mcp` serves, built once per gateway: the configured servers, where sessions are kept, the upstream clients. */
export interface McpGateway {
  options: McpOptions;
  store: McpSessionStore;
  upstreams: McpUpstreams;
}

/** What the gateway's MCP server needs for one request of one client session. */
export interface McpRequestContext {
  options: McpOptions;
  upstreams: McpUpstreams;
  store: McpSessionStore;
  key: KeyRecord;
  sessionId: string;
  record: McpSessionRecord;
  /** Fires when the client goes away. */
  signal: AbortSignal;
  /** Each `tools/call` once it ended, whatever its outcome (usage event, access log, span, metrics). */
  observeCall(call: McpToolCall): void;
}
