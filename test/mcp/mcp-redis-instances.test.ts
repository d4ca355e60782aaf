import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createGateway } from '../../src/gateway.js';
import { RedisMcpSessionStore } from '../../src/mcp/redis-session-store.js';
import { startVault, type Vault } from '../agents/mcp-rig.js';
import { freePort, serve, type Served } from '../helpers/serve.js';
import { startCliProcess, stopGatewayProcesses } from '../policy/gateway-processes.js';
import { redisTargets } from '../redis/targets.js';
import { type HttpUpstream, startHttpUpstream } from './fixtures/http-upstream.js';

/**
 * Two gateway instances, each with its own `RedisMcpSessionStore` on the same Redis, behind a
 * "balancer" (the client's fetch) that the test points at one or the other: one MCP session
 * is started on A and served by both, and once ended on one it is unknown to the other.
 */

const KEY = 'sk-mcp-redis';
const targets = await redisTargets();
const prefix = `infergate-test-${randomBytes(4).toString('hex')}:`;

let vault: Vault;
beforeAll(async () => {
  vault = await startVault();
});
afterAll(async () => {
  await vault?.close();
  // Once, after every suite of the file: closing a target stops the Redis a local run started for it.
  await Promise.all(targets.map((target) => target.close(prefix)));
});

describe.each(targets)('/mcp on two instances sharing Redis ($name)', (target) => {
  const stores: RedisMcpSessionStore[] = [];
  let a: Served;
  let b: Served;
  beforeAll(async () => {
    const instance = () => {
      const store = new RedisMcpSessionStore({ ...target.connection, keyPrefix: prefix });
      stores.push(store);
      return createGateway({
        keys: [{ key: KEY, id: 'redis-key', mcp: ['vault'] }],
        providers: {},
        models: [],
        logger: false,
        mcp: { servers: { vault: { url: vault.url, bearerToken: 'vault-credential' } }, sessionStore: store },
      });
    };
    [a, b] = await Promise.all([serve(instance() as never), serve(instance() as never)]);
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close(), ...stores.map((store) => store.close())]);
  });

  /** A client whose every request goes to `to.instance`, wherever the SDK meant to send it. */
  function balancedClient(to: { instance: Served }): { client: Client; transport: StreamableHTTPClientTransport; seen: string[] } {
    const seen: string[] = [];
    const balancer: typeof fetch = (input, init) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      seen.push(`${init?.method ?? 'GET'} ${to.instance === a ? 'A' : 'B'}`);
      return fetch(`${to.instance.url}${url.pathname}`, init);
    };
    const transport = new StreamableHTTPClientTransport(new URL(`${a.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${KEY}` } },
      fetch: balancer,
    });
    return { client: new Client({ name: 'test', version: '1' }), transport, seen };
  }

  function post(instance: Served, sessionId: string, body: unknown): Promise<Response> {
    return fetch(`${instance.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${KEY}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': sessionId,
        'mcp-protocol-version': '2025-06-18',
      },
      body: JSON.stringify(body),
    });
  }

  it('initialize on A, tools/list on B, tools/call on A and on B, DELETE on B: then A answers 404', async () => {
    vault.reset();
    vault.token = randomBytes(8).toString('hex');
    const to = { instance: a };
    const { client, transport, seen } = balancedClient(to);
    await client.connect(transport);
    const sessionId = transport.sessionId!;
    expect(sessionId).toBeTruthy();

    to.instance = b;
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['vault__reveal']);
    for (const instance of [a, b]) {
      to.instance = instance;
      const result = await client.callTool({ name: 'vault__reveal', arguments: { purpose: instance === a ? 'on A' : 'on B' } });
      expect(result.content).toEqual([{ type: 'text', text: `The vault token is ${vault.token}` }]);
    }
    expect(vault.calls).toEqual([{ purpose: 'on A' }, { purpose: 'on B' }]);
    expect(seen).toEqual(expect.arrayContaining(['POST A', 'POST B']));
    // One upstream session for the whole client session, whichever instance served it.
    expect(vault.requests.filter((request) => request.rpc.includes('initialize'))).toHaveLength(1);
    const resumed = vault.requests.filter((request) => request.httpMethod === 'POST' && !request.rpc.includes('initialize'));
    expect(new Set(resumed.map((request) => request.headers['mcp-session-id'])).size).toBe(1);

    to.instance = b;
    await transport.terminateSession();
    expect(seen.at(-1)).toBe('DELETE B');
    // The upstream session ended with it.
    expect(vault.requests.at(-1)).toMatchObject({ httpMethod: 'DELETE', headers: { 'mcp-session-id': resumed[0]!.headers['mcp-session-id'] } });
    await client.close();
    const after = await post(a, sessionId, { jsonrpc: '2.0', id: 9, method: 'tools/list', params: {} });
    expect(after.status).toBe(404);
    expect(((await after.json()) as { error: { code: number } }).error.code).toBe(-32001);
    expect(await target.keys(`${prefix}mcp-session:*`)).toEqual([]);
  });

  it('a session record corrupted in Redis is a 404 on either instance, not a crash', async () => {
    const to = { instance: a };
    const { client, transport } = balancedClient(to);
    await client.connect(transport);
    const sessionId = transport.sessionId!;
    await target.client().set(`${prefix}mcp-session:${sessionId}`, '{"keyId": "redis-key", "upstream": 7');
    for (const instance of [a, b]) {
      const response = await post(instance, sessionId, { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
      expect(response.status).toBe(404);
      expect(((await response.json()) as { error: { code: number } }).error.code).toBe(-32001);
    }
    await client.close();
  });
});

describe.each(targets)('/mcp cancellation across two instances sharing Redis ($name)', (target) => {
  const stores: RedisMcpSessionStore[] = [];
  const observed: { A: string[]; B: string[] } = { A: [], B: [] };
  let upstream: HttpUpstream;
  let a: Served;
  let b: Served;
  beforeAll(async () => {
    upstream = await startHttpUpstream();
    const instance = (name: 'A' | 'B') => {
      const store = new RedisMcpSessionStore({ ...target.connection, keyPrefix: prefix });
      stores.push(store);
      return createGateway({
        keys: [{ key: KEY, id: 'redis-key', mcp: ['work'] }],
        providers: {},
        models: [],
        logger: false,
        mcp: { servers: { work: { url: `${upstream.url}/mcp` } }, sessionStore: store },
        hooks: { onToolCall: (event) => void observed[name].push(`${event.tool} ${event.outcome}`) },
      });
    };
    [a, b] = await Promise.all([serve(instance('A') as never), serve(instance('B') as never)]);
    await Promise.all(stores.map((store) => store.ready()));
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close(), ...stores.map((store) => store.close())]);
    await upstream?.close();
  });

  it('a notifications/cancelled that reaches B cancels the call running on A, and A tells the upstream', async () => {
    const client = new Client({ name: 'test', version: '1' });
    const transport = new StreamableHTTPClientTransport(new URL(`${a.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${KEY}` } } });
    await client.connect(transport);
    const sessionId = transport.sessionId!;
    const headers = {
      authorization: `Bearer ${KEY}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-session-id': sessionId,
      'mcp-protocol-version': transport.protocolVersion ?? '2025-06-18',
    };
    const send = (instance: Served, body: unknown) => fetch(`${instance.url}/mcp`, { method: 'POST', headers, body: JSON.stringify(body) });
    // The call runs on A (its response starts with its first event: not awaited here).
    const call = send(a, { jsonrpc: '2.0', id: 77, method: 'tools/call', params: { name: 'work__hang', arguments: {} } });
    await vi.waitFor(() => expect(upstream.seen.map((request) => request.rpc)).toContain('tools/call'));
    // The cancellation goes to B, which does not run it: B publishes it, A hears it and cancels.
    const cancel = await send(b, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 77, reason: 'user pressed Esc' } });
    expect(cancel.status).toBe(202);
    await vi.waitFor(() => expect(upstream.seen.map((request) => request.rpc)).toContain('notifications/cancelled'));
    await vi.waitFor(() => expect(observed.A).toEqual(['hang cancelled']));
    expect(observed.B).toEqual([]);
    // A's response to the call ends, with the cancellation's reason, rather than hanging.
    const answer = await call;
    expect(answer.status).toBe(200);
    expect(await answer.text()).toContain('user pressed Esc');
    await client.close();
  });

  it('a cancellation naming another session, or a call that runs nowhere, cancels nothing', async () => {
    observed.A.length = 0;
    const connect = async () => {
      const client = new Client({ name: 'test', version: '1' });
      const transport = new StreamableHTTPClientTransport(new URL(`${a.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${KEY}` } } });
      await client.connect(transport);
      return { client, transport };
    };
    const running = await connect();
    const other = await connect();
    const pending = running.client.callTool({ name: 'work__echo', arguments: { text: 'slow?' } });
    const headers = {
      authorization: `Bearer ${KEY}`,
      'content-type': 'application/json',
      'mcp-session-id': other.transport.sessionId!,
      'mcp-protocol-version': other.transport.protocolVersion ?? '2025-06-18',
      accept: 'application/json, text/event-stream',
    };
    // The other session's id space: request 1 there is not request 1 of the running session.
    const response = await fetch(`${b.url}/mcp`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } }),
    });
    expect(response.status).toBe(202);
    expect((await pending).content).toEqual([{ type: 'text', text: 'slow?' }]);
    await vi.waitFor(() => expect(observed.A).toEqual(['echo ok']));
    await Promise.all([running.client.close(), other.client.close()]);
  });
});

describe.each(targets)('/mcp while its Redis is unreachable ($name)', (target) => {
  it('answers 503 with retry-after in MCP’s shape, logs the cause, and never calls the upstream', async () => {
    const store = new RedisMcpSessionStore({ ...target.unreachable(await freePort()), keyPrefix: prefix, timeoutMs: 300 });
    const logged: { message: string; fields: Record<string, unknown> | undefined }[] = [];
    const record = (message: string, fields?: Record<string, unknown>) => void logged.push({ message, fields });
    const gateway = createGateway({
      keys: [{ key: KEY, id: 'redis-key', mcp: ['vault'] }],
      providers: {},
      models: [],
      logger: { info: record, warn: record, error: record },
      mcp: { servers: { vault: { url: vault.url } }, sessionStore: store },
    });
    vault.reset();
    try {
      const initialize = {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      };
      const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
      for (const [extra, body] of [
        [{}, initialize],
        [{ 'mcp-session-id': randomUUID() }, { jsonrpc: '2.0', id: 2, method: 'tools/list' }],
      ] as const) {
        const response = await gateway.fetch('http://gateway.test/mcp', { method: 'POST', headers: { ...headers, ...extra }, body: JSON.stringify(body) });
        expect(response.status).toBe(503);
        expect(response.headers.get('retry-after')).toBe('1');
        expect(await response.json()).toMatchObject({
          jsonrpc: '2.0',
          error: { code: -32603, message: expect.stringContaining('try again'), data: { code: 'mcp_session_store_unavailable' } },
        });
      }
      expect(JSON.stringify(logged)).toContain('mcp session store');
      expect(vault.calls).toEqual([]);
    } finally {
      await gateway.dispose();
      await store.close();
    }
  });
});

describe.each(targets)('the standalone server: mcp.sessionStore of type redis in the config file ($name)', (target) => {
  const cliPrefix = `${prefix}cli:`;

  it('two servers from one config file serve one session', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'infergate-mcp-'));
    const configPath = join(dir, 'config.json');
    await writeFile(
      configPath,
      JSON.stringify({
        keys: [{ key: KEY, id: 'cli-key', mcp: ['vault'] }],
        mcp: { servers: { vault: { url: vault.url } }, sessionStore: { type: 'redis', ...target.connection, keyPrefix: cliPrefix } },
      }),
    );
    const instances = await Promise.all([startCliProcess(configPath), startCliProcess(configPath)]);
    try {
      const [first, second] = instances;
      const to = { url: first!.url };
      const balancer: typeof fetch = (input, init) => fetch(`${to.url}${new URL(input instanceof Request ? input.url : String(input)).pathname}`, init);
      const transport = new StreamableHTTPClientTransport(new URL(`${first!.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${KEY}` } },
        fetch: balancer,
      });
      const client = new Client({ name: 'test', version: '1' });
      await client.connect(transport);
      expect(await target.keys(`${cliPrefix}mcp-session:*`)).toEqual([`${cliPrefix}mcp-session:${transport.sessionId}`]);
      to.url = second!.url;
      expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['vault__reveal']);
      await client.close();
    } finally {
      await stopGatewayProcesses(instances);
      await rm(dir, { recursive: true, force: true });
    }
  });
});
