import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { TOOL_SEPARATOR } from './mcp-options.js';
import type { McpRequestContext } from './mcp-session.js';
import { clientToolName } from './tool-names.js';
import { mayUse } from './tool-scope.js';
import { allPages } from './upstream-lists.js';
import { withUpstream } from './with-upstream.js';

/** Every tool of one upstream, as it names them. */
function upstreamTools(client: Client, signal: AbortSignal) {
  return allPages(async (cursor) => {
    const page = await client.listTools(cursor ? { cursor } : {}, { signal });
    return { items: page.tools, nextCursor: page.nextCursor };
  });
}

/** The tools of `server` the key may use, named as clients see them: `<server>__<tool>`, shortened past 64 characters. */
export async function toolsForClient(context: McpRequestContext, server: string, client: Client) {
  const { items, truncated } = await upstreamTools(client, context.signal);
  const usable = items.filter((tool) => mayUse(context.key, `${server}${TOOL_SEPARATOR}${tool.name}`, server));
  return { items: usable.map((tool) => ({ ...tool, name: clientToolName(server, tool.name) })), truncated };
}

/** The upstream tool a shortened name stands for: the one of `server` whose client name it is (one listing of the server). */
export async function unshorten(context: McpRequestContext, server: string, requested: string, signal: AbortSignal): Promise<string | undefined> {
  const { items } = await withUpstream(context, server, signal, (client) => upstreamTools(client, signal));
  return items.find((tool) => clientToolName(server, tool.name) === requested)?.name;
}
