import type { KeyRecord } from '../auth/key-store.js';
import type { McpOptions } from './mcp-options.js';
import type { Logger } from '../logger.js';
import { inFlightCalls } from './in-flight-calls.js';
import { type McpSessionRecord, type McpSessionStore, MemoryMcpSessionStore, unavailableAs503 } from './session-store.js';
import type { McpToolCall } from './tool-call.js';
import { createUpstreams, type McpUpstreams } from './upstreams.js';

/** What `/mcp` serves, built once per gateway: the configured servers, where sessions are kept, the upstream clients. */
export interface McpGateway {
  options: McpOptions;
  store: McpSessionStore;
  upstreams: McpUpstreams;
  /** Stops hearing other instances' cancellations and closes the upstream clients (`gateway.dispose()`). */
  close(): Promise<void>;
}

/**
 * The gateway's MCP side: its store answering 503 when it cannot be reached, its upstreams, and
 * the cancellations other instances publish reaching the calls running here.
 */
export function createMcpGateway(options: McpOptions, logger: Logger): McpGateway {
  const store = unavailableAs503(options.sessionStore ?? new MemoryMcpSessionStore());
  const upstreams = createUpstreams(options, logger);
  const unsubscribe = store.subscribeCancels?.(({ sessionId, requestId, reason }) => inFlightCalls(upstreams).cancel(sessionId, requestId, reason));
  return {
    options,
    store,
    upstreams,
    async close() {
      unsubscribe?.();
      await upstreams.close();
    },
  };
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
