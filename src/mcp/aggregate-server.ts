import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { TOOL_SEPARATOR } from './mcp-options.js';
import type { McpRequestContext } from './mcp-session.js';
import type { McpCallOutcome } from './tool-call.js';
import { mayUse } from './tool-scope.js';
import { isUpstreamTimeout } from './upstream-timeout.js';
import { rpcError } from './upstreams.js';

/**
 * The gateway's MCP server for one request of one session: `tools/list` gathers every upstream's
 * tools the key may see, renamed `<server>__<tool>`; `tools/call` routes by that name. An upstream
 * that is down is left out of the list, never failing the others.
 */
export function aggregateServer(context: McpRequestContext): Server {
  const { options, record, key, signal } = context;
  // The low-level Server (the SDK marks it deprecated for servers of their own): a proxy needs its raw handlers.
  const server = new Server({ name: 'infergate', version: '1' }, { capabilities: { tools: { listChanged: false } } });

  /** Runs `work` on one upstream, keeping its session in the record when the upstream renewed it. */
  const use = async <T>(name: string, work: (client: Client) => Promise<T>): Promise<T> => {
    const before = record.upstream[name];
    const { result, state } = await context.upstreams.use(name, before, signal, work);
    if (state.sessionId !== before?.sessionId) {
      record.upstream[name] = state;
      await context.store.set(context.sessionId, record);
    }
    return result;
  };

  server.setRequestHandler(ListToolsRequestSchema, async () => {
    const names = Object.keys(options.servers).filter((name) => !record.upstream[name]?.down);
    const lists = await Promise.allSettled(
      names.map((name) =>
        use(name, async (client) => {
          const tools: Tool[] = [];
          let cursor: string | undefined;
          do {
            const page = await client.listTools(cursor ? { cursor } : {}, { signal });
            tools.push(...page.tools);
            cursor = page.nextCursor;
          } while (cursor);
          return tools.map((tool) => ({ ...tool, name: `${name}${TOOL_SEPARATOR}${tool.name}` })).filter((tool) => mayUse(key, tool.name, name));
        }),
      ),
    );
    return { tools: lists.flatMap((list) => (list.status === 'fulfilled' ? list.value : [])) };
  });

  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const started = performance.now();
    const full = request.params.name;
    const at = full.indexOf(TOOL_SEPARATOR);
    const name = at > 0 ? full.slice(0, at) : '';
    const tool = name ? full.slice(at + TOOL_SEPARATOR.length) : full;
    const requestBytes = byteLength(request.params);
    const observe = (outcome: McpCallOutcome, answer: unknown, error?: string) =>
      context.observeCall({
        server: options.servers[name] ? name : '',
        tool,
        outcome,
        durationMs: performance.now() - started,
        requestBytes,
        responseBytes: byteLength(answer),
        ...(error !== undefined ? { error } : {}),
        ...(options.captureArguments ? { arguments: request.params.arguments } : {}),
      });
    // Out of scope and unknown answer alike, so a key learns nothing of servers it may not use.
    if (!name || !options.servers[name] || !mayUse(key, full, name)) {
      const refusal = rpcError(-32602, `Unknown tool: ${full}`);
      observe('refused', { code: -32602, message: refusal.message });
      throw refusal;
    }
    try {
      const result = await use(name, (client) => client.callTool({ ...request.params, name: tool }, undefined, { signal }));
      observe(result.isError === true ? 'tool_error' : 'ok', result);
      return result;
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      observe(signal.aborted ? 'cancelled' : isUpstreamTimeout(error) ? 'timeout' : 'upstream_error', { message }, message);
      throw error;
    }
  });
  return server;
}

function byteLength(value: unknown): number {
  return value === undefined ? 0 : new TextEncoder().encode(JSON.stringify(value)).byteLength;
}
