import { GatewayError } from '../errors.js';
import type { RouteContext } from '../http/route.js';
import { mcpHandler } from '../mcp/mcp-route.js';
import { reportToolCall } from '../mcp/tool-call-report.js';

// Built once per gateway (runtime.ts cannot import a handler: RouteContext → GatewayRuntime).
const handlers = new WeakMap<object, (context: RouteContext) => Promise<Response>>();

/** `/mcp`: the configured MCP gateway, or a 404 as on a gateway without one. */
export function mcpRoute(context: RouteContext): Promise<Response> {
  const mcp = context.options.mcp;
  if (!mcp) throw new GatewayError({ status: 404, message: 'No MCP servers are configured on this gateway.' });
  let handler = handlers.get(mcp);
  if (!handler) {
    handler = mcpHandler(mcp, reportToolCall);
    handlers.set(mcp, handler);
  }
  return handler(context);
}
