import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { GetPromptRequestSchema, ListPromptsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { TOOL_SEPARATOR } from './mcp-options.js';
import type { McpRequestContext } from './mcp-session.js';
import { routeName } from './tool-names.js';
import { mayUse } from './tool-scope.js';
import { upstreamRpcError } from './upstream-errors.js';
import { allPages, listFromEveryServer } from './upstream-lists.js';
import { withUpstream } from './with-upstream.js';
import { rpcError } from './upstreams.js';

/**
 * `prompts/list` and `prompts/get` of the gateway's server: every upstream's prompts named
 * `<server>__<prompt>` and scoped by the key's `mcp` patterns as tools are (out of scope answers
 * as an unknown prompt does).
 */
export function handlePrompts(server: Server, context: McpRequestContext): void {
  const { key } = context;
  server.setRequestHandler(ListPromptsRequestSchema, () =>
    listFromEveryServer(context, 'prompts', async (name, client) => {
      const { items, truncated } = await allPages(async (cursor) => {
        const page = await client.listPrompts(cursor ? { cursor } : {}, { signal: context.signal });
        return { items: page.prompts, nextCursor: page.nextCursor };
      });
      const usable = items.filter((prompt) => mayUse(key, `${name}${TOOL_SEPARATOR}${prompt.name}`, name));
      return { items: usable.map((prompt) => ({ ...prompt, name: `${name}${TOOL_SEPARATOR}${prompt.name}` })), truncated };
    }),
  );

  server.setRequestHandler(GetPromptRequestSchema, async (request) => {
    const requested = request.params.name;
    const routed = routeName(requested, context.options.servers);
    if (!routed || !mayUse(key, requested, routed.server)) throw rpcError(-32602, `Unknown prompt: ${requested}`);
    try {
      return await withUpstream(context, routed.server, context.signal, (client) =>
        client.getPrompt({ ...request.params, name: routed.name }, { signal: context.signal }),
      );
    } catch (error) {
      throw upstreamRpcError(error);
    }
  });
}
