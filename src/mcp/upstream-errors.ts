import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { isUpstreamTimeout } from './upstream-timeout.js';
import { rpcError } from './upstreams.js';

/**
 * What the client gets for an upstream's failure: the upstream's JSON-RPC error as it sent it
 * (the SDK's McpError prefixes `MCP error <code>: ` to its message: taken off again), a timeout
 * with its own code, anything else (an HTTP status, a refused connection) an internal error:
 * its code is no JSON-RPC code.
 */
export function upstreamRpcError(error: unknown): Error & { code: number } {
  if (isUpstreamTimeout(error)) return error;
  if (error instanceof McpError) {
    const prefix = `MCP error ${error.code}: `;
    const message = error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message;
    return Object.assign(rpcError(error.code, message), error.data !== undefined ? { data: error.data } : {}) as Error & { code: number };
  }
  return rpcError(ErrorCode.InternalError, error instanceof Error ? error.message : String(error)) as Error & { code: number };
}
