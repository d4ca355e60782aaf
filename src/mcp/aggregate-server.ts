import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { KeyRecord } from '../auth/key-store.js';
import { TOOL_SEPARATOR, type McpOptions } from './mcp-options.js';
import type { McpSessionRecord } from './session-store.js';
import { mayUse } from './tool-scope.js';
import { connectHttp, type UpstreamConnection } from './upstreams.js';

/** A JSON-RPC error as the spec writes it (the SDK's McpError would prefix its message). */
function rpcError(code: number, message: string): Error {
  return Object.assign(new Error(message), { code });
}

/**
 * The gateway's MCP server for one request of one session: `tools/list` gathers every upstream's
 * tools the key may see, renamed `<server>__<tool>`; `tools/call` routes by that name. An upstream
 * that is down is left out of the list (and named in the log), never failing the others.
 */
export function aggregateServer(options: McpOptions, record: McpSessionRecord, key: KeyRecord, signal: AbortSignal): Server {
  // The low-level Server (the SDK marks it deprecated for servers of their own): a proxy needs its raw handlers.
  const server = new Server({ name: 'infergate', version: '1' }, { capabilities: { tools: { listChanged: false } } });

  const connect = (name: string): Promise<UpstreamConnection> => {
    const config = options.servers[name]!;
    if (!('url' in config)) throw rpcError(-32603, `Server \`${name}\` is not reachable over HTTP from this gateway yet.`);
    return connectHttp(config, record.upstream[name], signal);
  };

  server.setRequestHandler(ListToolsRequestSchema, async () => {
    const names = Object.keys(options.servers).filter((name) => !record.upstream[name]?.down);
    const lists = await Promise.allSettled(
      names.map(async (name) => {
        const upstream = await connect(name);
        try {
          const tools: Tool[] = [];
          let cursor: string | undefined;
          do {
            const page = await upstream.client.listTools(cursor ? { cursor } : {}, { signal });
            tools.push(...page.tools);
            cursor = page.nextCursor;
          } while (cursor);
          return tools.map((tool) => ({ ...tool, name: `${name}${TOOL_SEPARATOR}${tool.name}` })).filter((tool) => mayUse(key, tool.name, name));
        } finally {
          await upstream.close();
        }
      }),
    );
    return { tools: lists.flatMap((list) => (list.status === 'fulfilled' ? list.value : [])) };
  });

  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const full = request.params.name;
    const at = full.indexOf(TOOL_SEPARATOR);
    const name = at > 0 ? full.slice(0, at) : '';
    // Out of scope and unknown answer alike, so a key learns nothing of servers it may not use.
    if (!name || !options.servers[name] || !mayUse(key, full, name)) throw rpcError(-32602, `Unknown tool: ${full}`);
    const upstream = await connect(name);
    try {
      return await upstream.client.callTool({ ...request.params, name: full.slice(at + TOOL_SEPARATOR.length) }, undefined, { signal });
    } finally {
      await upstream.close();
    }
  });
  return server;
}
