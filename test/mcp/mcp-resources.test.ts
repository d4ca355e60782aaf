import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KeyRecord } from '../../src/auth/key-store.js';
import { createGateway } from '../../src/gateway.js';
import { resourceOwner } from '../../src/mcp/resource-owner.js';
import { mayReadResources } from '../../src/mcp/tool-scope.js';
import { serve, type Served } from '../helpers/serve.js';
import { type HttpUpstream, startHttpUpstream } from './fixtures/http-upstream.js';

/**
 * Resources through `/mcp`: two SDK-built upstreams on loopback, the SDK's client through the
 * gateway. URIs stay the upstreams' own; reads are routed by who lists the URI or by a template's
 * literal start; a key needs a server whole to see its resources.
 */

const text = (uri: string, body: string) => ({ contents: [{ uri, mimeType: 'text/plain', text: body }] });

function docsResources(server: McpServer): void {
  server.registerResource('guide', 'docs://guide', { mimeType: 'text/plain' }, (uri) => text(uri.href, 'the guide'));
  server.registerResource('page', new ResourceTemplate('docs://pages/{page}', { list: undefined }), { mimeType: 'text/plain' }, (uri, { page }) =>
    text(uri.href, `page ${String(page)}`),
  );
  server.registerResource('readme', 'shared://readme', { mimeType: 'text/plain' }, (uri) => text(uri.href, 'docs readme'));
  // An MCP Apps tool: its UI is a resource the client reads by the URI in the tool's `_meta`.
  server.registerResource('widget', 'ui://docs/widget.html', { mimeType: 'text/html;profile=mcp-app' }, (uri) => ({
    contents: [{ uri: uri.href, mimeType: 'text/html;profile=mcp-app', text: '<p>widget</p>' }],
  }));
  server.registerTool('show', { description: 'Shows a widget', _meta: { ui: { resourceUri: 'ui://docs/widget.html' } } }, async () => ({
    content: [{ type: 'text', text: 'shown' }],
  }));
}

function notesResources(server: McpServer): void {
  server.registerResource('today', 'notes://today', { mimeType: 'text/plain' }, (uri) => text(uri.href, 'notes of today'));
  server.registerResource('readme', 'shared://readme', { mimeType: 'text/plain' }, (uri) => text(uri.href, 'notes readme'));
  // A template whose regular expression would backtrack on a long URI that does not end in `x`.
  server.registerResource('evil', new ResourceTemplate('evil://{+a}{+b}{+c}x', { list: undefined }), {}, (uri) => text(uri.href, 'evil'));
}

let docs: HttpUpstream;
let notes: HttpUpstream;
let gateway: Served;

beforeAll(async () => {
  [docs, notes] = await Promise.all([startHttpUpstream({ tools: docsResources }), startHttpUpstream({ tools: notesResources })]);
  gateway = await serve(
    createGateway({
      providers: {},
      models: [],
      keys: [
        { key: 'sk-all', id: 'all', mcp: ['*'] },
        { key: 'sk-docs', id: 'docs-only', mcp: ['docs__*'] },
        { key: 'sk-tool', id: 'tool-only', mcp: ['docs__show'] },
      ],
      mcp: { servers: { docs: { url: `${docs.url}/mcp` }, notes: { url: `${notes.url}/mcp` } } },
    }) as never,
  );
});
afterAll(async () => {
  await gateway?.close();
  await Promise.all([docs?.close(), notes?.close()]);
});

async function connect(key: string): Promise<Client> {
  const client = new Client({ name: 'test', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  return client;
}

const reads = (upstream: HttpUpstream) => upstream.seen.filter((request) => request.rpc === 'resources/read').length;

describe('/mcp resources', () => {
  it('lists every server’s resources and templates under their own URIs, and advertises resources without subscriptions', async () => {
    const client = await connect('sk-all');
    expect(client.getServerCapabilities()?.resources).toEqual({ listChanged: false });
    const { resources } = await client.listResources();
    expect(resources.map((resource) => resource.uri).sort()).toEqual(
      ['docs://guide', 'notes://today', 'shared://readme', 'shared://readme', 'ui://docs/widget.html'].sort(),
    );
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((template) => template.uriTemplate).sort()).toEqual(['docs://pages/{page}', 'evil://{+a}{+b}{+c}x']);
    await expect(client.subscribeResource({ uri: 'docs://guide' })).rejects.toThrow(/-32601/);
    await client.close();
  });

  it('reads each resource from the server that serves it: listed, by template, and the first in config order for a URI two list', async () => {
    const client = await connect('sk-all');
    const read = async (uri: string) => {
      const { contents } = await client.readResource({ uri });
      return (contents[0] as { text: string }).text;
    };
    expect(await read('docs://guide')).toBe('the guide');
    expect(await read('notes://today')).toBe('notes of today');
    expect(await read('docs://pages/7')).toBe('page 7');
    expect(await read('shared://readme')).toBe('docs readme');
    // MCP Apps: the tool's UI, read by the URI its `_meta` names.
    const { tools } = await client.listTools();
    const show = tools.find((tool) => tool.name === 'docs__show');
    const uiUri = (show!._meta as { ui: { resourceUri: string } }).ui.resourceUri;
    expect(await client.readResource({ uri: uiUri })).toEqual({
      contents: [{ uri: 'ui://docs/widget.html', mimeType: 'text/html;profile=mcp-app', text: '<p>widget</p>' }],
    });
    await client.close();
  });

  it('a URI no server serves is -32002 Resource not found, and no upstream is asked to read it; a long one against a backtracking template answers at once', async () => {
    const client = await connect('sk-all');
    const before = reads(docs) + reads(notes);
    await expect(client.readResource({ uri: 'nowhere://x' })).rejects.toThrow('MCP error -32002: Resource not found: nowhere://x');
    const long = `evil://${'a'.repeat(100_000)}`;
    await expect(client.readResource({ uri: long })).rejects.toThrow(/-32002/);
    expect(reads(docs) + reads(notes)).toBe(before);
    await client.close();
  });

  it('a key needs a server whole: docs__* sees docs’ resources only, a tool-only key sees none; out of scope reads as not found, never reaching the upstream', async () => {
    const scoped = await connect('sk-docs');
    expect((await scoped.listResources()).resources.map((resource) => resource.uri).sort()).toEqual([
      'docs://guide',
      'shared://readme',
      'ui://docs/widget.html',
    ]);
    expect((await scoped.listResourceTemplates()).resourceTemplates.map((template) => template.uriTemplate)).toEqual(['docs://pages/{page}']);
    const notesReads = reads(notes);
    const notesLists = notes.seen.filter((request) => request.rpc === 'resources/list').length;
    // One server in reach: a URI it does not list is still sent to it, and its own error comes back.
    await expect(scoped.readResource({ uri: 'notes://today' })).rejects.toThrow(/Resource notes:\/\/today not found/);
    expect(reads(notes)).toBe(notesReads);
    expect(notes.seen.filter((request) => request.rpc === 'resources/list').length).toBe(notesLists);
    await scoped.close();

    const toolOnly = await connect('sk-tool');
    expect((await toolOnly.listResources()).resources).toEqual([]);
    await expect(toolOnly.readResource({ uri: 'docs://guide' })).rejects.toThrow('MCP error -32002: Resource not found: docs://guide');
    expect((await toolOnly.callTool({ name: 'docs__show', arguments: {} })).content).toEqual([{ type: 'text', text: 'shown' }]);
    await toolOnly.close();
  });
});

describe('resourceOwner', () => {
  const served = (table: Record<string, { uris?: string[]; templates?: string[] }>) => async (server: string) => ({
    uris: table[server]?.uris ?? [],
    templates: table[server]?.templates ?? [],
  });

  it('prefers a listed URI, then the longest template start, then the only server; a bare scheme picks nothing', async () => {
    const table = {
      a: { uris: ['file:///a.txt'], templates: ['file:///{path}', 'repo://{owner}'] },
      b: { uris: ['x://same'], templates: ['repo://github/{owner}/{repo}'] },
      c: { uris: ['x://same'] },
    };
    expect(await resourceOwner('file:///a.txt', ['a', 'b', 'c'], served(table))).toBe('a');
    expect(await resourceOwner('x://same', ['a', 'b', 'c'], served(table))).toBe('b');
    expect(await resourceOwner('x://same', ['c', 'b'], served(table))).toBe('c');
    expect(await resourceOwner('repo://github/infergate/gateway', ['a', 'b'], served(table))).toBe('b');
    // `file:///{path}` starts with a bare scheme: it says nothing of which server has a file.
    expect(await resourceOwner('file:///b.txt', ['a', 'b'], served(table))).toBeUndefined();
    expect(await resourceOwner('file:///b.txt', ['a'], served(table))).toBe('a');
    expect(await resourceOwner('anything', [], served(table))).toBeUndefined();
  });

  it('a server whose lists fail is left out, not the read', async () => {
    const failing = async (server: string) => {
      if (server === 'down') throw new Error('unreachable');
      return { uris: ['ok://x'], templates: [] };
    };
    expect(await resourceOwner('ok://x', ['down', 'up'], failing)).toBe('up');
  });
});

describe('mayReadResources', () => {
  const key = (mcp: string[]) => ({ id: 'k', models: [], mcp }) as unknown as KeyRecord;

  it('needs the whole server', () => {
    for (const pattern of ['docs', 'docs__*', '*', 'do*']) expect(mayReadResources(key([pattern]), 'docs'), pattern).toBe(true);
    for (const pattern of ['docs__show', 'docs__s*', 'notes', 'docs_x']) expect(mayReadResources(key([pattern]), 'docs'), pattern).toBe(false);
  });
});
