import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ListResourcesRequestSchema, ListResourceTemplatesRequestSchema, ReadResourceRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { McpRequestContext } from './mcp-session.js';
import { resourceOwner } from './resource-owner.js';
import { mayReadResources } from './tool-scope.js';
import { upstreamRpcError } from './upstream-errors.js';
import { allPages, listFromEveryServer } from './upstream-lists.js';
import { liveServers, withUpstream } from './with-upstream.js';
import { rpcError } from './upstreams.js';

/** MCP's "Resource not found". */
const RESOURCE_NOT_FOUND = -32002;

/**
 * `resources/list`, `resources/templates/list` and `resources/read` of the gateway's server. URIs
 * are passed on as the upstreams wrote them, never renamed: tool results and tools' `_meta` (MCP
 * Apps' `ui://` resources) link to them. A read goes to the server that lists the URI, else to the
 * one whose template's literal start it begins with (resource-owner.ts). Only servers the key may
 * use whole (`github`, `github__*`, `*`) are asked or read; out of scope reads as not found.
 */
export function handleResources(server: Server, context: McpRequestContext): void {
  const readable = () => liveServers(context).filter((name) => mayReadResources(context.key, name));

  server.setRequestHandler(ListResourcesRequestSchema, () =>
    listFromEveryServer(context, 'resources', (_, client) => listResources(client, context.signal), readable()),
  );
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () =>
    listFromEveryServer(context, 'resourceTemplates', (_, client) => listTemplates(client, context.signal), readable()),
  );

  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    const { uri } = request.params;
    const servers = readable();
    const owner = await resourceOwner(uri, servers, (name) =>
      withUpstream(context, name, context.signal, async (client) => {
        const [resources, templates] = await Promise.allSettled([listResources(client, context.signal), listTemplates(client, context.signal)]);
        return {
          uris: resources.status === 'fulfilled' ? resources.value.items.map((resource) => resource.uri) : [],
          templates: templates.status === 'fulfilled' ? templates.value.items.map((template) => template.uriTemplate) : [],
        };
      }),
    );
    if (owner === undefined) throw rpcError(RESOURCE_NOT_FOUND, `Resource not found: ${uri.length > 200 ? `${uri.slice(0, 200)}…` : uri}`);
    try {
      return await withUpstream(context, owner, context.signal, (client) => client.readResource(request.params, { signal: context.signal }));
    } catch (error) {
      throw upstreamRpcError(error);
    }
  });
}

function listResources(client: Client, signal: AbortSignal) {
  return allPages(async (cursor) => {
    const page = await client.listResources(cursor ? { cursor } : {}, { signal });
    return { items: page.resources, nextCursor: page.nextCursor };
  });
}

function listTemplates(client: Client, signal: AbortSignal) {
  return allPages(async (cursor) => {
    const page = await client.listResourceTemplates(cursor ? { cursor } : {}, { signal });
    return { items: page.resourceTemplates, nextCursor: page.nextCursor };
  });
}
