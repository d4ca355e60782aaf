import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { callTool } from './call-tool.js';
import type { McpRequestContext } from './mcp-session.js';
import { listFromEveryServer } from './upstream-lists.js';
import { toolsForClient } from './upstream-tools.js';

/** `tools/list` (every upstream's tools the key may use) and `tools/call` (call-tool.ts) of the gateway's server. */
export function handleTools(server: Server, context: McpRequestContext): void {
  server.setRequestHandler(ListToolsRequestSchema, () => listFromEveryServer(context, 'tools', (name, client) => toolsForClient(context, name, client)));
  server.setRequestHandler(CallToolRequestSchema, (request, extra) => callTool(context, request, extra));
}
