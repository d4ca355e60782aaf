import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KeyRecord } from '../../src/auth/key-store.js';
import { createGateway } from '../../src/gateway.js';
import { mayReach, mayUse } from '../../src/mcp/tool-scope.js';
import { serve, type Served } from '../helpers/serve.js';
import { type HttpUpstream, startHttpUpstream } from './fixtures/http-upstream.js';

/** A key's `mcp` scope bounds which upstreams the gateway talks to for it, not only what it lists. */

const key = (mcp?: string[]): KeyRecord => ({ id: 'k', models: [], ...(mcp ? { mcp } : {}) }) as unknown as KeyRecord;

describe('mayReach', () => {
  it('is true for a server any pattern could match a tool of, and false otherwise', () => {
    expect(mayReach(key(['vault']), 'vault')).toBe(true);
    expect(mayReach(key(['vault__reveal']), 'vault')).toBe(true);
    expect(mayReach(key(['vault__re*']), 'vault')).toBe(true);
    expect(mayReach(key(['vau*']), 'vault')).toBe(true);
    expect(mayReach(key(['*__create_*']), 'github')).toBe(true);
    expect(mayReach(key(['*']), 'github')).toBe(true);
    expect(mayReach(key(['vault']), 'vaults')).toBe(false);
    expect(mayReach(key(['vault__reveal']), 'vault_x')).toBe(false);
    expect(mayReach(key(['github__*']), 'vault')).toBe(false);
    expect(mayReach(key(['gitlab*']), 'github')).toBe(false);
    expect(mayReach(key([]), 'vault')).toBe(false);
    expect(mayReach(key(), 'vault')).toBe(false);
  });

  it('never says no for a server of a tool mayUse allows', () => {
    const servers = ['vault', 'vault_x', 'git', 'github', 'a-b'];
    const tools = ['reveal', 'create_issue', 'x__y', ''];
    const patterns = ['vault', 'vault__*', 'git*', '*__create_*', '*', 'github__create_*', 'a-b__x__y', 'v*t__r*', '*_x__*'];
    for (const pattern of patterns)
      for (const server of servers)
        for (const tool of tools) {
          if (mayUse(key([pattern]), `${server}__${tool}`, server)) expect(mayReach(key([pattern]), server), `${pattern} ${server}__${tool}`).toBe(true);
        }
  });
});

describe('/mcp talks only to the upstreams a key may reach', () => {
  let vault: HttpUpstream;
  let other: HttpUpstream;
  let gateway: Served;

  beforeAll(async () => {
    [vault, other] = await Promise.all([startHttpUpstream(), startHttpUpstream()]);
    gateway = await serve(
      createGateway({
        providers: {},
        models: [],
        keys: [
          { key: 'sk-vault', id: 'vault-only', mcp: ['vault__echo'] },
          { key: 'sk-none', id: 'no-mcp' },
        ],
        mcp: { servers: { vault: { url: `${vault.url}/mcp` }, other: { url: `${other.url}/mcp` } } },
      }) as never,
    );
  });
  afterAll(async () => {
    await gateway?.close();
    await Promise.all([vault?.close(), other?.close()]);
  });

  async function session(secret: string): Promise<Client> {
    const client = new Client({ name: 'test', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${secret}` } } }));
    return client;
  }

  it('a key scoped to one server has no session opened on the other, nor its tools listed or called', async () => {
    const client = await session('sk-vault');
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['vault__echo']);
    await expect(client.callTool({ name: 'other__echo', arguments: { text: 'x' } })).rejects.toThrow(/Unknown tool: other__echo/);
    expect(vault.seen.some((seen) => seen.rpc === 'initialize')).toBe(true);
    expect(other.seen).toEqual([]);
    await client.close();
  });

  it('a key without mcp gets a session with no tools, and no upstream hears of it', async () => {
    const before = vault.seen.length;
    const client = await session('sk-none');
    expect((await client.listTools()).tools).toEqual([]);
    expect(vault.seen.length).toBe(before);
    expect(other.seen).toEqual([]);
    await client.close();
  });
});
