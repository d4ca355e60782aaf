import { randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ListToolsRequestSchema, LoggingMessageNotificationSchema, type Progress } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createGateway } from '../../src/gateway.js';
import { type InFlightCalls, inFlightCalls } from '../../src/mcp/in-flight-calls.js';
import type { McpGateway } from '../../src/mcp/mcp-session.js';
import type { McpOptions } from '../../src/mcp/mcp-options.js';
import type { McpToolCall } from '../../src/mcp/tool-call.js';
import { clientToolName } from '../../src/mcp/tool-names.js';
import { LIST_BOUNDS, TRUNCATED_META } from '../../src/mcp/upstream-lists.js';
import { type Served, serve } from '../helpers/serve.js';

/**
 * What the gateway's MCP server forwards between a client and the upstream during a call:
 * progress, cancellation, the client going away. SDK-built upstream on loopback, the SDK's client
 * through the gateway.
 */

/** A promise and its resolve (Node 20 has no Promise.withResolvers). */
function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((settle) => {
    resolve = settle;
  });
  return { promise, resolve };
}

/** What the upstream saw, by test. */
const seen = {
  /** Resolved when the `wait` tool started; replaced per test. */
  started: deferred<void>(),
  /** Resolved with the abort reason when `wait` saw its request cancelled. */
  aborted: deferred<unknown>(),
};

function upstreamServer(): McpServer {
  const server = new McpServer({ name: 'work', version: '1' }, { capabilities: { logging: {} } });
  server.registerTool('steps', { description: 'Reports progress twice', inputSchema: { count: z.number() } }, async ({ count }, extra) => {
    const progressToken = extra._meta?.progressToken;
    for (let step = 1; step <= count; step++) {
      if (progressToken !== undefined) {
        await extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress: step, total: count, message: `step ${step}` } });
      }
    }
    return { content: [{ type: 'text', text: `done after ${count} (token ${progressToken === undefined ? 'absent' : typeof progressToken})` }] };
  });
  server.registerTool('wait', { description: 'Waits until cancelled' }, async (extra) => {
    seen.started.resolve();
    await new Promise<void>((resolve) => {
      if (extra.signal.aborted) resolve();
      extra.signal.addEventListener('abort', () => resolve(), { once: true });
    });
    seen.aborted.resolve(extra.signal.reason);
    return { content: [{ type: 'text', text: 'too late' }] };
  });
  server.registerTool('chatty', { description: 'Logs as it works' }, async (extra) => {
    for (const level of ['debug', 'warning'] as const) {
      await extra.sendNotification({ method: 'notifications/message', params: { level, logger: 'work', data: `${level} line` } });
    }
    return { content: [{ type: 'text', text: 'said it' }] };
  });
  server.registerPrompt('greet', { description: 'A greeting', argsSchema: { name: z.string() } }, ({ name }) => ({
    messages: [{ role: 'user', content: { type: 'text', text: `Hello ${name}` } }],
  }));
  server.registerTool(LONG_TOOL, { description: 'A name too long for some clients' }, async () => ({ content: [{ type: 'text', text: 'long one' }] }));
  server.registerTool('read__all', { description: 'A name with the separator in it' }, async () => ({ content: [{ type: 'text', text: 'read all' }] }));
  return server;
}

const LONG_TOOL = 'summarize_the_quarterly_revenue_report_for_every_region_and_product';

let upstream: Served;
const servers = (): McpOptions['servers'] => ({ work: { url: `${upstream.url}/mcp` } });

beforeAll(async () => {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  upstream = await serve(async (req, res) => {
    const id = req.headers['mcp-session-id'];
    let transport = typeof id === 'string' ? transports.get(id) : undefined;
    if (!transport) {
      transport = new StreamableHTTPServerTransport({ sessionIdGenerator: randomUUID, onsessioninitialized: (sid) => void transports.set(sid, transport!) });
      await upstreamServer().connect(transport);
    }
    await transport.handleRequest(req, res);
  });
});
afterAll(async () => {
  await upstream?.close();
});

/** The gateway, what it observed of each call (`hooks.onToolCall`), its in-flight calls. */
let gateway: Served;
let inFlight: InFlightCalls;
const calls: McpToolCall[] = [];

beforeAll(async () => {
  const instance = createGateway({
    providers: {},
    models: [],
    keys: [
      { key: 'sk-mcp', id: 'mcp-key', mcp: ['work'] },
      { key: 'sk-steps', id: 'steps-key', mcp: ['work__steps'] },
    ],
    mcp: { servers: servers() },
    hooks: { onToolCall: (event) => void calls.push(event) },
  });
  inFlight = inFlightCalls((instance as unknown as { options: { mcp: McpGateway } }).options.mcp.upstreams);
  gateway = await serve(instance as never);
});
afterAll(async () => {
  await gateway?.close();
});

async function connect(key = 'sk-mcp'): Promise<Client> {
  const client = new Client({ name: 'test', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  return client;
}

describe('/mcp progress', () => {
  it("re-emits the upstream's progress to the client under the client's own token", async () => {
    const client = await connect();
    const progress: Progress[] = [];
    const result = await client.callTool({ name: 'work__steps', arguments: { count: 2 } }, undefined, { onprogress: (step) => progress.push(step) });
    expect(progress).toEqual([
      { progress: 1, total: 2, message: 'step 1' },
      { progress: 2, total: 2, message: 'step 2' },
    ]);
    // The upstream got a token (the gateway's own, for the SDK to route its progress back).
    expect(result.content).toEqual([{ type: 'text', text: 'done after 2 (token number)' }]);
    await client.close();
  });
});

describe('/mcp logging', () => {
  it("forwards the upstream's log messages during a call, at or above the level the client set", async () => {
    const client = await connect();
    const logs: unknown[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => void logs.push(notification.params));
    await client.callTool({ name: 'work__chatty', arguments: {} });
    expect(logs).toEqual([
      { level: 'debug', logger: 'work', data: 'debug line' },
      { level: 'warning', logger: 'work', data: 'warning line' },
    ]);
    // The level is the session's: kept in its record, whatever instance or server answers next.
    await client.setLoggingLevel('info');
    logs.length = 0;
    await client.callTool({ name: 'work__chatty', arguments: {} });
    expect(logs).toEqual([{ level: 'warning', logger: 'work', data: 'warning line' }]);
    await client.close();
  });
});

describe('/mcp prompts', () => {
  it('lists prompts as <server>__<prompt> and gets one by that name', async () => {
    const client = await connect();
    expect((await client.listPrompts()).prompts.map((prompt) => prompt.name)).toEqual(['work__greet']);
    const prompt = await client.getPrompt({ name: 'work__greet', arguments: { name: 'Ada' } });
    expect(prompt.messages).toEqual([{ role: 'user', content: { type: 'text', text: 'Hello Ada' } }]);
    await client.close();
  });

  it('a prompt out of the key’s scope is neither listed nor got', async () => {
    const client = await connect('sk-steps');
    expect((await client.listPrompts()).prompts).toEqual([]);
    await expect(client.getPrompt({ name: 'work__greet', arguments: { name: 'Ada' } })).rejects.toThrow('Unknown prompt: work__greet');
    await client.close();
  });
});

describe('/mcp lists', () => {
  it('an upstream that pages forever is cut at the bound, and the list says so', async () => {
    // A new server per request, stateless: every tools/list page names a next one.
    const endless = await serve(async (req, res) => {
      const server = new Server({ name: 'endless', version: '1' }, { capabilities: { tools: {} } });
      server.setRequestHandler(ListToolsRequestSchema, ({ params }) => {
        const page = Number(params?.cursor ?? 0);
        return { tools: [{ name: `t${page}`, inputSchema: { type: 'object' } }], nextCursor: String(page + 1) };
      });
      const transport = new StreamableHTTPServerTransport({});
      await server.connect(transport);
      await transport.handleRequest(req, res);
    });
    const instance = createGateway({
      providers: {},
      models: [],
      keys: [{ key: 'sk-all', id: 'all', mcp: ['*'] }],
      mcp: { servers: { endless: { url: `${endless.url}/mcp` } } },
    });
    const served = await serve(instance as never);
    try {
      const client = new Client({ name: 'test', version: '1' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${served.url}/mcp`), { requestInit: { headers: { authorization: 'Bearer sk-all' } } }));
      const list = await client.listTools();
      expect(list.tools).toHaveLength(LIST_BOUNDS.pages);
      expect(list._meta).toEqual({ [TRUNCATED_META]: ['endless'] });
      await client.close();
    } finally {
      await served.close();
      await endless.close();
    }
  });
});

describe('/mcp tool names', () => {
  it('a name past 64 characters is shortened with a hash, and a call by it reaches the tool', async () => {
    calls.length = 0;
    const client = await connect();
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    expect(names.every((name) => name.length <= 64)).toBe(true);
    const short = names.find((name) => name.startsWith('work__summarize_'))!;
    expect(short).toMatch(/^work__summarize_the_quarterly_revenue_report_for_eve__[0-9a-f]{10}$/);
    expect((await client.callTool({ name: short, arguments: {} })).content).toEqual([{ type: 'text', text: 'long one' }]);
    expect(calls.at(-1)).toMatchObject({ server: 'work', tool: LONG_TOOL, outcome: 'ok' });
    await client.close();
  });

  it('an upstream tool whose name contains `__` routes whole to its server', async () => {
    const client = await connect();
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('work__read__all');
    expect((await client.callTool({ name: 'work__read__all', arguments: {} })).content).toEqual([{ type: 'text', text: 'read all' }]);
    await client.close();
  });

  it('a shortened name out of the key’s scope is as unknown as any', async () => {
    calls.length = 0;
    const client = await connect('sk-steps');
    const short = clientToolName('work', LONG_TOOL);
    await expect(client.callTool({ name: short, arguments: {} })).rejects.toThrow(`Unknown tool: ${short}`);
    expect(calls.at(-1)).toMatchObject({ outcome: 'refused' });
    await client.close();
  });
});

describe('/mcp cancellation', () => {
  it("the client's notifications/cancelled (a POST of its own) cancels the upstream call, observed as `cancelled`", async () => {
    seen.started = deferred();
    seen.aborted = deferred();
    calls.length = 0;
    const client = await connect();
    const cancel = new AbortController();
    const call = client.callTool({ name: 'work__wait', arguments: {} }, undefined, { signal: cancel.signal });
    await seen.started.promise;
    expect(inFlight.size).toBe(1);
    cancel.abort('user pressed Esc');
    await expect(call).rejects.toThrow();
    // The gateway's client told the upstream: the SDK sends notifications/cancelled upstream.
    expect(await seen.aborted.promise).toBe('user pressed Esc');
    await expect.poll(() => calls.length).toBe(1);
    expect(calls[0]).toMatchObject({ server: 'work', tool: 'wait', outcome: 'cancelled' });
    expect(inFlight.size).toBe(0);
    await client.close();
  });

  it('the client going away (its request aborted) cancels the upstream call', async () => {
    seen.started = deferred();
    seen.aborted = deferred();
    calls.length = 0;
    const client = await connect();
    const call = client.callTool({ name: 'work__wait', arguments: {} });
    await seen.started.promise;
    // close() aborts the client's fetches: the gateway's request signal fires.
    await client.close();
    await expect(call).rejects.toThrow();
    await seen.aborted.promise;
    await expect.poll(() => calls.length).toBe(1);
    expect(calls[0]).toMatchObject({ outcome: 'cancelled' });
    expect(inFlight.size).toBe(0);
  });

  it('a completed call leaves nothing in the in-flight map', async () => {
    calls.length = 0;
    const client = await connect();
    await client.callTool({ name: 'work__steps', arguments: { count: 1 } });
    await expect.poll(() => calls.length).toBe(1);
    expect(calls[0]?.outcome).toBe('ok');
    expect(inFlight.size).toBe(0);
    await client.close();
  });
});
