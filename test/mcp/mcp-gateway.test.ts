import { randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createGateway } from '../../src/gateway.js';
import { MemoryMcpSessionStore } from '../../src/mcp/session-store.js';
import { freePort, serve, type Served } from '../helpers/serve.js';

/** WIP (issue 27): an SDK-built upstream MCP server on loopback, the SDK's client through the gateway's `/mcp`. */

const TOKEN = randomUUID();
let upstream: Served;
let gateway: Served;
const upstreamAuth: string[] = [];

beforeAll(async () => {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  upstream = await serve(async (req, res) => {
    upstreamAuth.push(String(req.headers.authorization));
    const id = req.headers['mcp-session-id'];
    let transport = typeof id === 'string' ? transports.get(id) : undefined;
    if (!transport) {
      transport = new StreamableHTTPServerTransport({ sessionIdGenerator: randomUUID, onsessioninitialized: (sid) => void transports.set(sid, transport!) });
      const server = new McpServer({ name: 'vault', version: '1' });
      server.registerTool('reveal', { description: 'Reveals the token', inputSchema: { label: z.string() } }, async ({ label }) => ({
        content: [{ type: 'text', text: `${label}: ${TOKEN}` }],
      }));
      server.registerTool('hidden', { description: 'Not for every key' }, async () => ({ content: [{ type: 'text', text: 'secret' }] }));
      await server.connect(transport);
    }
    await transport.handleRequest(req, res);
  });
  const instance = createGateway({
    providers: {},
    models: [],
    keys: [
      { key: 'sk-mcp', id: 'mcp-key', mcp: ['vault__reveal'] },
      { key: 'sk-none', id: 'no-mcp' },
    ],
    mcp: { servers: { vault: { url: `${upstream.url}/mcp`, bearerToken: 'upstream-secret' } } },
  });
  gateway = await serve(instance as never);
});
afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

async function connect(key: string): Promise<Client> {
  const client = new Client({ name: 'test', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  return client;
}

describe('/mcp', () => {
  it('lists the tools the key may use as <server>__<tool> and calls one, the upstream credential injected', async () => {
    const client = await connect('sk-mcp');
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['vault__reveal']);
    const result = await client.callTool({ name: 'vault__reveal', arguments: { label: 'token' } });
    expect(result.content).toEqual([{ type: 'text', text: `token: ${TOKEN}` }]);
    expect(upstreamAuth.every((header) => header === 'Bearer upstream-secret')).toBe(true);
    await client.close();
  });

  it('a tool outside the key’s scope is as unknown as a tool that does not exist', async () => {
    const client = await connect('sk-mcp');
    await expect(client.callTool({ name: 'vault__hidden', arguments: {} })).rejects.toThrow(/Unknown tool: vault__hidden/);
    await client.close();
    const none = await connect('sk-none');
    expect((await none.listTools()).tools).toEqual([]);
    await none.close();
  });

  it('refuses a missing key with 401', async () => {
    const response = await fetch(`${gateway.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(response.status).toBe(401);
  });
});

describe('/mcp across instances and failures', () => {
  it('two gateway instances sharing a session store serve one session, its upstream session reused', async () => {
    const store = new MemoryMcpSessionStore();
    const make = () =>
      createGateway({
        providers: {},
        models: [],
        keys: [{ key: 'sk-mcp', id: 'mcp-key', mcp: ['vault'] }],
        mcp: { servers: { vault: { url: `${upstream.url}/mcp`, bearerToken: 'upstream-secret' } }, sessionStore: store },
      });
    const [a, b] = await Promise.all([serve(make() as never), serve(make() as never)]);
    try {
      // The client initializes on A; each later request goes to B.
      let calls = 0;
      const fetchAlternating: typeof fetch = (input, init) => {
        const url = new URL(String(input instanceof Request ? input.url : input));
        const target = calls++ === 0 ? a.url : b.url;
        return fetch(`${target}${url.pathname}`, init);
      };
      const client = new Client({ name: 'test', version: '1' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${a.url}/mcp`), { requestInit: { headers: { authorization: 'Bearer sk-mcp' } }, fetch: fetchAlternating }),
      );
      const result = await client.callTool({ name: 'vault__reveal', arguments: { label: 'b' } });
      expect(result.content).toEqual([{ type: 'text', text: `b: ${TOKEN}` }]);
      expect(calls).toBeGreaterThan(1);
      await client.close();
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('an upstream that is down is left out; the others still list and answer', async () => {
    const dead = `http://127.0.0.1:${await freePort()}/mcp`;
    const instance = createGateway({
      providers: {},
      models: [],
      keys: [{ key: 'sk-mcp', id: 'mcp-key', mcp: ['*'] }],
      mcp: { servers: { vault: { url: `${upstream.url}/mcp`, bearerToken: 'upstream-secret' }, gone: { url: dead } } },
    });
    const served = await serve(instance as never);
    try {
      const client = new Client({ name: 'test', version: '1' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${served.url}/mcp`), { requestInit: { headers: { authorization: 'Bearer sk-mcp' } } }));
      const names = (await client.listTools()).tools.map((tool) => tool.name).sort();
      expect(names).toEqual(['vault__hidden', 'vault__reveal']);
      await client.close();
    } finally {
      await served.close();
    }
  });
});
