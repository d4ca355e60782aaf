/** How one `tools/call` through the gateway ended. */
export type McpCallOutcome =
  /** The upstream answered a result. */
  | 'ok'
  /** The upstream answered a result with `isError: true` (the tool failed, the call did not). */
  | 'tool_error'
  /** The key may not use the tool, or no server has it: the client got -32602 Unknown tool. */
  | 'refused'
  /** The upstream could not be reached, failed, or answered a JSON-RPC error. */
  | 'upstream_error'
  /** The upstream took longer than its timeout. */
  | 'timeout'
  /** The client cancelled it or went away. */
  | 'cancelled';

/** One tool call as the gateway saw it: what its usage event, access log, span and metrics carry. */
export interface McpToolCall {
  /** The upstream server's name (empty when the name matched no server). */
  server: string;
  /** The tool's name on its server (the client's full name when it matched no server). */
  tool: string;
  outcome: McpCallOutcome;
  durationMs: number;
  /** Size of the JSON of the call's params and of its result (or error), in bytes. */
  requestBytes: number;
  responseBytes: number;
  /** The upstream's error message, for `upstream_error` and `timeout`. */
  error?: string | undefined;
  /** The call's arguments, only with `mcp.captureArguments`. */
  arguments?: unknown;
}
