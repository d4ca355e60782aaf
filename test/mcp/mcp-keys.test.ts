import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminHandler } from '../../src/admin/admin-handler.js';
import { MemoryKeyStore } from '../../src/admin/keys/memory-key-store.js';
import { createGateway } from '../../src/gateway.js';
import { startVault, type Vault } from '../agents/mcp-rig.js';
import { serve, type Served } from '../helpers/serve.js';

/** A key's `mcp` scope made and changed through the admin API, and what `/mcp` then lists to that key. */

const ADMIN_KEY = 'admin-key-0123456789abcdef';
let vault: Vault;
let served: Served;

beforeAll(async () => {
  vault = await startVault();
  const keys = new MemoryKeyStore();
  const gateway = createGateway({ keys, providers: {}, models: [], logger: false, mcp: { servers: { vault: { url: vault.url } } } });
  const admin = createAdminHandler({ key: ADMIN_KEY, keys, logger: false });
  served = await serve((req, res) => (req.url?.startsWith('/admin') ? admin(req, res) : gateway(req, res)));
});
afterAll(async () => {
  await served?.close();
  await vault?.close();
});

function admin(path: string, method: string, json?: unknown): Promise<Response> {
  return fetch(`${served.url}/admin${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
    ...(json === undefined ? {} : { body: JSON.stringify(json) }),
  });
}

async function toolsOf(key: string): Promise<string[]> {
  const client = new Client({ name: 'test', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${served.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  const { tools } = await client.listTools();
  await client.close();
  return tools.map((tool) => tool.name);
}

describe('admin API: a key’s mcp', () => {
  it('is set on create, shown on the key, changed and cleared with PATCH; /mcp lists what it allows', async () => {
    const created = await admin('/keys', 'POST', { name: 'agent', mcp: ['vault__rev*'] });
    expect(created.status).toBe(201);
    const { id, key, mcp } = (await created.json()) as { id: string; key: string; mcp: string[] };
    expect(mcp).toEqual(['vault__rev*']);
    expect(await toolsOf(key)).toEqual(['vault__reveal']);

    const patched = await admin(`/keys/${id}`, 'PATCH', { mcp: ['github'] });
    expect(((await patched.json()) as { mcp: string[] }).mcp).toEqual(['github']);
    expect(await toolsOf(key)).toEqual([]);

    await admin(`/keys/${id}`, 'PATCH', { mcp: ['vault'] });
    expect(((await (await admin(`/keys/${id}`, 'GET')).json()) as { mcp: string[] }).mcp).toEqual(['vault']);
    expect(await toolsOf(key)).toEqual(['vault__reveal']);

    const cleared = (await (await admin(`/keys/${id}`, 'PATCH', { mcp: null })).json()) as { mcp?: string[] };
    expect(cleared).not.toHaveProperty('mcp');
    expect(await toolsOf(key)).toEqual([]);
  });

  it('refuses patterns that are not names with a 400 naming the field', async () => {
    const cases: [unknown, string][] = [
      ['vault', 'mcp'],
      [['vault', 'a b'], 'mcp[1]'],
      [[42], 'mcp[0]'],
      [['x'.repeat(201)], 'mcp[0]'],
      [Array.from({ length: 257 }, () => 'vault'), 'mcp'],
    ];
    for (const [mcp, param] of cases) {
      const response = await admin('/keys', 'POST', { mcp });
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: { param: string } }).error).toMatchObject({ param, code: 'invalid_value' });
    }
  });
});
