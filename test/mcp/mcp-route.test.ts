import { randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createGateway } from '../../src/gateway.js';
import { MemoryMcpSessionStore } from '../../src/mcp/session-store.js';
import { serve, type Served } from '../helpers/serve.js';
import { type HttpUpstream, startHttpUpstream } from './fixtures/http-upstream.js';

/**
 * `/mcp` as the Streamable HTTP transport specifies it (2025-06-18, 2025-11-25) and the SDK's
 * transport answers: every refusal a JSON-RPC error with no id, the status the spec names, before
 * any session is made or upstream called; the protocol version negotiated and kept with the session.
 */

let upstream: HttpUpstream;
let gateway: Served;
let limited: Served;
let bare: Served;
const store = new MemoryMcpSessionStore();
/** Requests the upstream has had so far. */
const upstreamRequests = () => upstream.seen.length;

beforeAll(async () => {
  upstream = await startHttpUpstream();
  const mcp = { servers: { vault: { url: `${upstream.url}/mcp` } }, sessionStore: store };
  const keys = [
    { key: 'sk-mcp', id: 'mcp-key', mcp: ['vault'] },
    { key: 'sk-other', id: 'other-key', mcp: ['vault'] },
  ];
  gateway = await serve(createGateway({ providers: {}, models: [], keys, mcp, limits: { jsonBodyBytes: 512 * 1024 } }) as never);
  limited = await serve(
    createGateway({ providers: {}, models: [], keys: [{ key: 'sk-once', id: 'once', mcp: ['vault'], limits: { requestsPerMinute: 1 } }], mcp }) as never,
  );
  bare = await serve(createGateway({ providers: {}, models: [], keys }) as never);
});
afterAll(async () => {
  await Promise.all([gateway?.close(), limited?.close(), bare?.close()]);
  await upstream?.close();
});

const ACCEPT = 'application/json, text/event-stream';

function post(body: unknown, headers: Record<string, string> = {}, base = gateway.url): Promise<Response> {
  return fetch(`${base}/mcp`, {
    method: 'POST',
    headers: { authorization: 'Bearer sk-mcp', accept: ACCEPT, 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

function initialize(protocolVersion = LATEST_PROTOCOL_VERSION, id: number | string = 1) {
  return { jsonrpc: '2.0', id, method: 'initialize', params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };
}

/** A new session of `sk-mcp` (or `key`), initialized at `version`: its id. */
async function newSession(version = LATEST_PROTOCOL_VERSION, key = 'sk-mcp'): Promise<string> {
  const response = await post(initialize(version), { authorization: `Bearer ${key}` });
  expect(response.status).toBe(200);
  await response.text();
  return response.headers.get('mcp-session-id')!;
}

/** The JSON-RPC messages of an answer, SSE or JSON. */
async function messagesOf(response: Response): Promise<Record<string, unknown>[]> {
  const text = await response.text();
  if (!(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) return [JSON.parse(text)].flat();
  return text
    .split('\n')
    .filter((line) => line.startsWith('data: ') && line.length > 6)
    .map((line) => JSON.parse(line.slice(6)));
}

/** An HTTP error answered as a JSON-RPC error with no id, and its `data.code`. */
async function expectRpcError(response: Response, status: number, code: number, gatewayCode?: string): Promise<string> {
  const text = await response.text();
  expect(response.status, text).toBe(status);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  const body = JSON.parse(text);
  expect(body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code, message: expect.any(String) } });
  if (gatewayCode) expect(body.error.data).toEqual({ code: gatewayCode });
  return body.error.message;
}

describe('/mcp errors in MCP’s shape', () => {
  it('a missing key: 401 with a Bearer challenge and a JSON-RPC error', async () => {
    const response = await post(initialize(), { authorization: '' });
    expect(response.headers.get('www-authenticate')).toBe('Bearer realm="infergate"');
    await expectRpcError(response, 401, -32000, 'missing_api_key');
  });

  it('a wrong key: 401 whose challenge says the token was refused, no resource_metadata', async () => {
    const response = await post(initialize(), { authorization: 'Bearer sk-wrong' });
    expect(response.headers.get('www-authenticate')).toBe('Bearer realm="infergate", error="invalid_token"');
    await expectRpcError(response, 401, -32000, 'invalid_api_key');
  });

  it('a gateway without `mcp`: 404 as for a path it does not have, before asking for a key', async () => {
    const response = await post(initialize(), { authorization: '' }, bare.url);
    await expectRpcError(response, 404, -32000, 'not_found');
  });

  it('GET and other methods: 405 with Allow (no server-initiated stream)', async () => {
    for (const method of ['GET', 'PUT', 'PATCH']) {
      const response = await fetch(`${gateway.url}/mcp`, { method, headers: { authorization: 'Bearer sk-mcp', accept: 'text/event-stream' } });
      expect(response.headers.get('allow')).toBe('POST, DELETE');
      await expectRpcError(response, 405, -32000, 'method_not_allowed');
    }
  });

  it('an Accept without both JSON and SSE: 406; the orders Claude Code and Codex send are fine', async () => {
    for (const accept of ['application/json', 'text/event-stream', '*/*']) {
      await expectRpcError(await post(initialize(), { accept }), 406, -32000, 'not_acceptable');
    }
    for (const accept of [ACCEPT, 'text/event-stream, application/json']) expect((await post(initialize(), { accept })).status).toBe(200);
    const noAccept = await fetch(`${gateway.url}/mcp`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk-mcp', 'content-type': 'application/json' },
      body: '{}',
    });
    await expectRpcError(noAccept, 406, -32000);
  });

  it('a body that is not JSON by its type: 415', async () => {
    await expectRpcError(await post(initialize(), { 'content-type': 'text/plain' }), 415, -32000, 'unsupported_media_type');
  });

  it('a body over the gateway’s JSON limit: 413, declared or not', async () => {
    const big = { ...initialize(), pad: 'x'.repeat(520 * 1024) };
    await expectRpcError(await post(big), 413, -32000, 'request_too_large');
  });

  it('not JSON: 400 -32700; JSON nested past the limit or not a JSON-RPC message: 400 -32600', async () => {
    await expectRpcError(await post('{"jsonrpc":'), 400, -32700, 'invalid_json');
    await expectRpcError(await post(''), 400, -32700, 'missing_body');
    await expectRpcError(await post(`${'['.repeat(300)}${']'.repeat(300)}`), 400, -32600, 'json_too_deep');
    for (const body of [
      {},
      42,
      'null',
      { jsonrpc: '1.0', id: 1, method: 'ping' },
      { jsonrpc: '2.0', id: null, method: 'ping' },
      { jsonrpc: '2.0', id: 1, method: 7 },
      [],
    ]) {
      await expectRpcError(await post(body), 400, -32600, 'invalid_message');
    }
  });

  it('more than 10,000 keys in the messages, params and arguments (what zod copies key by key): 400 -32600; nested content is free', async () => {
    const session = await newSession();
    const call = (args: Record<string, unknown>) => ({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'vault__echo', arguments: args } });
    const keys = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, 0]));
    await expectRpcError(await post(call({ text: 'x', ...keys(10_001) }), { 'mcp-session-id': session }), 400, -32600, 'too_many_keys');
    await expectRpcError(
      await post({ jsonrpc: '2.0', id: 1, method: 'ping', params: keys(10_001) }, { 'mcp-session-id': session }),
      400,
      -32600,
      'too_many_keys',
    );
    const [nested] = await messagesOf(await post(call({ text: 'x', content: keys(20_000) }), { 'mcp-session-id': session }));
    expect(nested).toMatchObject({ id: 1, result: { content: [{ type: 'text', text: 'x' }] } });
  });

  it('a key over its limits: 429 as a JSON-RPC error, retry-after kept', async () => {
    expect((await post(initialize(), { authorization: 'Bearer sk-once' }, limited.url)).status).toBe(200);
    const response = await post(initialize(), { authorization: 'Bearer sk-once' }, limited.url);
    expect(response.headers.get('retry-after')).toMatch(/^\d+$/);
    await expectRpcError(response, 429, -32000);
  });
});

describe('/mcp protocol', () => {
  it('Claude Code’s server/discover probe (2026-07-28, no session): a -32601 at once, no session made', async () => {
    const before = upstreamRequests();
    const response = await post({ jsonrpc: '2.0', id: 'server-discover-probe-1', method: 'server/discover' }, { 'mcp-protocol-version': '2026-07-28' });
    expect(response.status).toBe(200);
    expect(response.headers.get('mcp-session-id')).toBeNull();
    expect(await response.json()).toEqual({ jsonrpc: '2.0', id: 'server-discover-probe-1', error: { code: -32601, message: 'Method not found' } });
    expect(upstreamRequests()).toBe(before);
  });

  it('keeps the version negotiated at initialize in the session: the one asked when supported, else the latest', async () => {
    for (const [asked, kept] of [
      ['2025-06-18', '2025-06-18'],
      ['2025-03-26', '2025-03-26'],
      ['1999-01-01', LATEST_PROTOCOL_VERSION],
    ]) {
      const response = await post(initialize(asked));
      const [answer] = await messagesOf(response);
      expect(answer).toMatchObject({ id: 1, result: { protocolVersion: kept } });
      expect((await store.get(response.headers.get('mcp-session-id')!))?.protocolVersion).toBe(kept);
    }
  });

  it('session ids come from the Web Crypto API, unguessable UUIDs', async () => {
    const spy = vi.spyOn(globalThis.crypto, 'randomUUID');
    try {
      const id = await newSession();
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(spy.mock.results.map((result) => result.value)).toContain(id);
    } finally {
      spy.mockRestore();
    }
  });

  it('MCP-Protocol-Version is optional (Gemini CLI sends none); one the gateway does not support is a 400', async () => {
    const session = await newSession('2025-06-18');
    const list = { jsonrpc: '2.0', id: 2, method: 'tools/list' };
    const [answer] = await messagesOf(await post(list, { 'mcp-session-id': session }));
    expect(answer).toMatchObject({ id: 2, result: { tools: expect.arrayContaining([expect.objectContaining({ name: 'vault__echo' })]) } });
    const message = await expectRpcError(
      await post(list, { 'mcp-session-id': session, 'mcp-protocol-version': '2099-01-01' }),
      400,
      -32000,
      'unsupported_protocol_version',
    );
    expect(message).toContain('Unsupported protocol version: 2099-01-01');
  });

  it('a request without a session: 400; an unknown one, a malformed one or another key’s: 404 alike', async () => {
    const ping = { jsonrpc: '2.0', id: 3, method: 'ping' };
    await expectRpcError(await post(ping), 400, -32000, 'session_required');
    const others = await newSession(LATEST_PROTOCOL_VERSION, 'sk-other');
    for (const id of [randomUUID(), 'x'.repeat(500), 'a b', others]) {
      expect(await expectRpcError(await post(ping, { 'mcp-session-id': id }), 404, -32001, 'session_not_found')).toBe('Session not found');
    }
  });

  it('notifications and responses only: 202 with no body', async () => {
    const session = await newSession();
    const response = await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, { 'mcp-session-id': session });
    expect(response.status).toBe(202);
    expect(await response.text()).toBe('');
  });

  it('initialize in a batch, as a notification, or with a session id: 400 -32600, no session made', async () => {
    const session = await newSession();
    const before = upstreamRequests();
    await expectRpcError(await post([initialize()]), 400, -32600, 'invalid_message');
    await expectRpcError(await post([initialize(), { jsonrpc: '2.0', id: 2, method: 'ping' }], { 'mcp-session-id': session }), 400, -32600);
    await expectRpcError(await post({ jsonrpc: '2.0', method: 'initialize', params: {} }), 400, -32600, 'invalid_message');
    await expectRpcError(await post(initialize(), { 'mcp-session-id': session }), 400, -32600, 'already_initialized');
    await expectRpcError(await post(initialize(), { 'mcp-session-id': randomUUID() }), 400, -32600, 'already_initialized');
    expect(upstreamRequests()).toBe(before);
  });

  it('an initialize without clientInfo: -32602 to that request, no session made', async () => {
    const before = upstreamRequests();
    const response = await post({ jsonrpc: '2.0', id: 9, method: 'initialize', params: { protocolVersion: '2025-06-18' } });
    expect(response.headers.get('mcp-session-id')).toBeNull();
    expect(await response.json()).toMatchObject({ id: 9, error: { code: -32602 } });
    expect(upstreamRequests()).toBe(before);
  });

  it('params that do not fit the method: -32602 Invalid params naming the field (the SDK’s server says -32603)', async () => {
    const session = await newSession();
    const call = { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'vault__echo', arguments: 'not an object' } };
    expect(await (await post(call, { 'mcp-session-id': session })).json()).toEqual({
      jsonrpc: '2.0',
      id: 4,
      error: { code: -32602, message: expect.stringContaining('Invalid params for tools/call: params.arguments') },
    });
    const [noParams] = await messagesOf(await post({ jsonrpc: '2.0', id: 5, method: 'tools/call' }, { 'mcp-session-id': session }));
    expect(noParams).toMatchObject({ id: 5, error: { code: -32602 } });
  });

  it('batches: refused in a session of 2025-06-18 or later (batching was removed), answered in a 2025-03-26 one', async () => {
    const batch = [
      { jsonrpc: '2.0', id: 'a', method: 'ping' },
      { jsonrpc: '2.0', id: 'b', method: 'tools/list' },
    ];
    for (const version of ['2025-06-18', LATEST_PROTOCOL_VERSION]) {
      const session = await newSession(version);
      await expectRpcError(await post(batch, { 'mcp-session-id': session }), 400, -32600, 'batch_refused');
    }
    const old = await newSession('2025-03-26');
    const answers = await messagesOf(await post(batch, { 'mcp-session-id': old, 'mcp-protocol-version': '2025-03-26' }));
    expect(answers.map((answer) => answer.id).sort()).toEqual(['a', 'b']);
    await expectRpcError(
      await post(
        Array.from({ length: 101 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'ping' })),
        { 'mcp-session-id': old },
      ),
      400,
      -32600,
    );
  });

  it('DELETE ends the session: 200, then 404; without a session id 400', async () => {
    const session = await newSession();
    const remove = (headers: Record<string, string>) =>
      fetch(`${gateway.url}/mcp`, { method: 'DELETE', headers: { authorization: 'Bearer sk-mcp', ...headers } });
    expect((await remove({ 'mcp-session-id': session })).status).toBe(200);
    await expectRpcError(await remove({ 'mcp-session-id': session }), 404, -32001);
    await expectRpcError(await post({ jsonrpc: '2.0', id: 1, method: 'ping' }, { 'mcp-session-id': session }), 404, -32001);
    await expectRpcError(await remove({}), 400, -32000);
  });

  it('the SDK client lists and calls through it, its session answered at the version it asked', async () => {
    const client = new Client({ name: 'sdk', version: '1' });
    const transport = new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`), { requestInit: { headers: { authorization: 'Bearer sk-mcp' } } });
    await client.connect(transport);
    expect((await store.get(transport.sessionId!))?.protocolVersion).toBe(LATEST_PROTOCOL_VERSION);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['vault__echo', 'vault__hang']);
    expect((await client.callTool({ name: 'vault__echo', arguments: { text: 'x' } })).content).toEqual([{ type: 'text', text: 'x' }]);
    await transport.terminateSession();
    expect(await store.get(transport.sessionId ?? '')).toBeUndefined();
    await client.close();
  });
});
