import { request as httpRequest, type IncomingMessage } from 'node:http';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGateway, type Gateway } from '../../src/gateway.js';
import type { UsageEvent } from '../../src/options.js';
import { createAnthropicProvider } from '../../src/providers/anthropic/anthropic-provider.js';
import { createOpenAIProvider } from '../../src/providers/openai/openai-provider.js';
import { startRawUpstream, type RawExchange, type RawRequest, type RawUpstream } from '../fakes/raw-upstream.js';
import { serve, type Served } from '../helpers/serve.js';
import { CLIENT_PATHS, CLIENTS, NATIVE, UPSTREAMS, type ClientProtocol, type UpstreamKind } from '../upstreams/harness.js';
import { activeResources, authOf, bodyOf, captureLogger, kernelQueued, send, sendFrames, settleTo, waitUntil, within } from './helpers.js';
import { BEFORE_TEXT, kindOfPath, streamFrames } from './wire.js';

/**
 * Disconnects and backpressure (issue 7, part 4): a client that leaves cancels the upstream at
 * once; a client that stops reading stops the upstream instead of filling the gateway's memory;
 * a thousand aborted streams leave no socket, pool connection or timer behind.
 */

const KEY = 'sk-disconnects';
const MODELS: Record<UpstreamKind, string> = { chat: 'raw-chat', responses: 'raw-resp', anthropic: 'raw-claude' };
/**
 * How long an upstream connection may stay open after the client's abort. The upstreams here never
 * end by themselves, so closing within it shows the abort was passed on; how fast is measured (the
 * issue's goal is 100 ms) and reported with the latencies below, not asserted: under load a
 * correct gateway can miss any tight bound.
 */
const ABORT_TO_CLOSE_MS = 2000;

let raw: RawUpstream;
let agent: Agent;
let gateway: Gateway;
let served: Served;
const usage: UsageEvent[] = [];
const log = captureLogger();
/** Every client protocol × upstream protocol pair. */
const cells = CLIENTS.flatMap((client) => UPSTREAMS.map((kind) => [client, kind] as [ClientProtocol, UpstreamKind]));
/** What the tests measured, printed at the end for the record. */
const measured: Record<string, unknown> = {};

beforeAll(async () => {
  raw = await startRawUpstream();
  raw.script = dispatch;
  // One pool for the three providers, so the test can read its connection counts. Its idle
  // connections expire after 500 ms (the providers' own pools keep them 30 s), so "back to
  // baseline" can be observed within the test.
  agent = new Agent({ keepAliveTimeout: 500, keepAliveMaxTimeout: 500 });
  gateway = createGateway({
    keys: [{ key: KEY }],
    providers: {
      'raw-chat': createOpenAIProvider({ baseURL: raw.url + '/v1', apiKey: 'up-key', responses: false, dispatcher: agent }),
      'raw-resp': createOpenAIProvider({ baseURL: raw.url + '/v1', apiKey: 'up-key', responses: true, chat: false, dispatcher: agent }),
      'raw-claude': createAnthropicProvider({ baseURL: raw.url, apiKey: 'up-key', dispatcher: agent }),
    },
    models: UPSTREAMS.map((kind) => ({ id: MODELS[kind], provider: MODELS[kind], upstreamModel: kind === 'anthropic' ? 'claude-sonnet-4-5' : 'gpt-5' })),
    logger: log.logger,
    // One attempt per request, so each upstream request is the one the client's abort cancels.
    policies: { retry: { retries: 0 } },
    hooks: { onUsage: (event) => void usage.push(event) },
  });
  served = await serve(gateway);
  // Warm-up, not measured: the first stream of each pair loads modules and JIT-compiles the path
  // (on a loaded 2-core machine a cold first abort once took 106 ms; warm ones take a few ms).
  for (const [client, kind] of cells) {
    const controller = new AbortController();
    const response = await send(served.url, client, bodyOf(client, MODELS[kind], marker('endless'), true), KEY, { signal: controller.signal });
    await response.body!.getReader().read();
    controller.abort();
  }
  await waitUntil(() => usage.length === cells.length, 2000);
  usage.length = 0;
});

afterAll(async () => {
  console.info('[disconnects] measured', JSON.stringify(measured));
  await served?.close();
  await agent?.close();
  await raw?.close();
});

// ---- the upstream's scripts ------------------------------------------------------------------

/** Scripts by the mode named in the request's marker (`mode:<name>#<n>`). */
const SCRIPTS: Record<string, (exchange: RawExchange, kind: UpstreamKind, stream: boolean) => Promise<void> | void> = {
  /** A stream that keeps going: the first delta, then one delta frame every 20 ms, until the gateway hangs up. */
  async endless(exchange, kind, stream) {
    if (!stream) {
      // A JSON answer whose body never finishes: headers and half a body, then nothing.
      exchange.head(200, { 'content-type': 'application/json', 'content-length': '100000' });
      exchange.raw('{"id":"x","choices":[');
      return;
    }
    exchange.sseHead();
    const frames = streamFrames(kind, ['Once', ' upon', ' a', ' time']);
    await sendFrames(exchange, frames.slice(0, BEFORE_TEXT[kind] + 1));
    const delta = frames[BEFORE_TEXT[kind] + 1]!;
    while (!exchange.gone) {
      exchange.chunk(delta);
      await sleep(20);
    }
  },
  /** Never sends the headers. */
  hang() {},
  /** The start of a stream through its first delta, then silence until the gateway hangs up. */
  async opened(exchange, kind) {
    exchange.sseHead();
    await sendFrames(exchange, streamFrames(kind, ['Once']).slice(0, BEFORE_TEXT[kind] + 1));
  },
  /** Up to 50 MB of deltas as fast as the connection takes them; stops when it stalls (see `flood`). */
  flood: (exchange, kind) => flood(exchange, kind),
};

function dispatch(exchange: RawExchange): Promise<void> | void {
  const mode = /mode:(\w+)#/.exec(JSON.stringify(exchange.request.body ?? ''))?.[1] ?? 'hang';
  return SCRIPTS[mode]!(exchange, kindOfPath(exchange.request.path), exchange.request.body?.stream === true);
}

let markers = 0;
const marker = (mode: string) => `mode:${mode}#${++markers}`;

/** The upstream request carrying `text`, once it arrived. */
async function upstreamRequest(text: string): Promise<RawRequest> {
  const find = () => raw.requests.find((request) => JSON.stringify(request.body ?? '').includes(text + '"'));
  await waitUntil(() => find() !== undefined, 5000);
  const found = find();
  if (!found) throw new Error(`the upstream never received ${text}`);
  return found;
}

// ---- abort → upstream close ------------------------------------------------------------------

const latencies: Record<string, number[]> = { streaming: [], 'waiting for headers': [], 'mid JSON body': [] };

describe('a client abort cancels the upstream (it never ends by itself)', () => {
  it.each(cells)('streaming: %s client → %s upstream, mid-stream', async (client, kind) => {
    const text = marker('endless');
    const controller = new AbortController();
    const response = await send(served.url, client, bodyOf(client, MODELS[kind], text, true), KEY, { signal: controller.signal });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    let seen = '';
    while (!seen.includes('upon')) seen += new TextDecoder().decode((await reader.read()).value);
    const upstream = await upstreamRequest(text);
    const abortedAt = performance.now();
    controller.abort();
    await within(upstream.closed, ABORT_TO_CLOSE_MS, 'the upstream connection close');
    const ms = upstream.closedAt! - abortedAt;
    latencies.streaming!.push(ms);
    expect(upstream.closedByPeer).toBe(true);
  });

  it.each(cells.flatMap(([client, kind]) => [true, false].map((stream) => [client, kind, stream] as const)))(
    'waiting for the headers: %s client → %s upstream (stream: %s)',
    async (client, kind, stream) => {
      const text = marker('hang');
      const controller = new AbortController();
      const pending = send(served.url, client, bodyOf(client, MODELS[kind], text, stream), KEY, { signal: controller.signal }).catch((error: unknown) => error);
      const upstream = await upstreamRequest(text);
      const abortedAt = performance.now();
      controller.abort();
      expect(await pending).toMatchObject({ name: 'AbortError' });
      await within(upstream.closed, ABORT_TO_CLOSE_MS, 'the upstream connection close');
      const ms = upstream.closedAt! - abortedAt;
      latencies['waiting for headers']!.push(ms);
    },
  );

  it.each(cells)('JSON: %s client → %s upstream, while the upstream body is still coming', async (client, kind) => {
    const text = marker('endless');
    const controller = new AbortController();
    const pending = send(served.url, client, bodyOf(client, MODELS[kind], text, false), KEY, { signal: controller.signal }).catch((error: unknown) => error);
    const upstream = await upstreamRequest(text);
    await sleep(20); // the headers and the first bytes are in the gateway by now
    const abortedAt = performance.now();
    controller.abort();
    expect(await pending).toMatchObject({ name: 'AbortError' });
    await within(upstream.closed, ABORT_TO_CLOSE_MS, 'the upstream connection close');
    const ms = upstream.closedAt! - abortedAt;
    latencies['mid JSON body']!.push(ms);
  });

  it('every aborted request was reported once to onUsage, as an error', async () => {
    const aborted = markers - cells.length; // the warm-up's are not counted
    await waitUntil(() => usage.length >= aborted, 2000);
    expect(usage).toHaveLength(aborted);
    expect(usage.every((event) => event.status === 'error')).toBe(true);
    expect(new Set(usage.map((event) => event.requestId)).size).toBe(aborted);
    for (const [name, values] of Object.entries(latencies)) {
      const sorted = [...values].sort((a, b) => a - b);
      measured[`abort→upstream close, ${name} (ms)`] = { median: round(sorted[sorted.length >> 1]), max: round(sorted.at(-1)) };
    }
  });
});

// ---- backpressure ----------------------------------------------------------------------------

/**
 * Most the upstream may get onto the wire while the client reads nothing. The issue says "say
 * < 8 MB"; on this machine loopback TCP autotuning (net.ipv4.tcp_rmem max 32 MiB) parks 7–10 MB
 * in the two connections' socket buffers alone, outside the gateway's memory, so the bound on
 * the total is 16 MB and the gateway's own share is bounded separately (measured with `ss`).
 */
const BACKPRESSURE_BOUND = 16 * 1024 * 1024;
/** What the gateway process itself may hold of a passed-through stream while the client is paused. */
const GATEWAY_HELD_BOUND_MB = 1;
const FLOOD_BYTES = 50 * 1024 * 1024;
/** The upstream gives up waiting for 'drain' after this long: it is stalled. */
const STALL_MS = 400;

interface FloodResult {
  /** Bytes the upstream handed to the kernel before it stalled (or in all). */
  sent: number;
  stalled: boolean;
  /** The gateway's end of the upstream connection. */
  gatewayPort?: number | undefined;
}
const floods = new Map<string, FloodResult>();

/** Sends SSE delta frames of ~1 KB until 50 MB are out, the socket stalls for `STALL_MS`, or the gateway hangs up. */
async function flood(exchange: RawExchange, kind: UpstreamKind): Promise<void> {
  const id = /mode:flood#\d+/.exec(JSON.stringify(exchange.request.body))![0];
  const frames = streamFrames(kind, ['x'.repeat(1000)]);
  const delta = Buffer.from(frames[BEFORE_TEXT[kind]]!);
  exchange.sseHead();
  await sendFrames(exchange, frames.slice(0, BEFORE_TEXT[kind]));
  let written = 0;
  const result: FloodResult = { sent: 0, stalled: false };
  floods.set(id, result);
  while (written < FLOOD_BYTES && !exchange.gone) {
    written += delta.length;
    if (!exchange.chunk(delta) && !(await exchange.drained(STALL_MS))) {
      result.stalled = !exchange.gone;
      break;
    }
  }
  // What reached the kernel: written minus what still waits in the fake's own socket buffer.
  result.sent = written - exchange.socket.writableLength;
  result.gatewayPort = exchange.socket.remotePort;
}

/** A client over node:http that reads the first chunk, then stops reading. */
function pausedClient(
  client: ClientProtocol,
  body: Record<string, unknown>,
): Promise<{ response: IncomingMessage; port: number; read(): number; destroy(): void }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(served.url + CLIENT_PATHS[client], {
      method: 'POST',
      agent: false,
      headers: { 'content-type': 'application/json', ...authOf(client, KEY) },
    });
    request.on('error', reject);
    request.on('response', (response) => {
      response.once('data', (chunk: Buffer) => {
        response.pause();
        resolve({
          response,
          port: request.socket!.localPort!,
          // What the client holds: the chunk it read and what its parser buffered since.
          read: () => chunk.length + response.readableLength,
          destroy: () => request.destroy(),
        });
      });
    });
    request.end(JSON.stringify(body));
  });
}

describe('a client that stops reading stops the upstream', () => {
  // Passthrough for each upstream, and one translated pair per client protocol.
  const pairs: [ClientProtocol, UpstreamKind][] = [
    ['chat', 'chat'],
    ['responses', 'responses'],
    ['messages', 'anthropic'],
    ['chat', 'anthropic'],
    ['responses', 'chat'],
    ['messages', 'responses'],
  ];
  it.each(pairs)('%s client → %s upstream: the upstream stalls after a bounded amount', async (client, kind) => {
    const text = marker('flood');
    const paused = await pausedClient(client, bodyOf(client, MODELS[kind], text, true));
    const upstream = await upstreamRequest(text);
    await waitUntil(() => floods.get(text)?.stalled === true || upstream.closedAt !== undefined, 20_000);
    const result = floods.get(text);
    expect(result?.stalled, 'the upstream should have stalled while the client read nothing').toBe(true);
    // Where the bytes the upstream sent are: socket buffers of the two connections (the kernel's),
    // the client, and, the rest, inside the gateway.
    const upstreamKernel = kernelQueued(raw.port, result!.gatewayPort!);
    const clientKernel = kernelQueued(Number(new URL(served.url).port), paused.port);
    const mb = (bytes: number) => round(bytes / 1024 / 1024);
    const breakdown: Record<string, number | undefined> = { 'sent by the upstream': mb(result!.sent) };
    if (upstreamKernel !== undefined && clientKernel !== undefined) {
      breakdown['in upstream socket buffers'] = mb(upstreamKernel);
      breakdown['in client socket buffers'] = mb(clientKernel);
      breakdown['read by the client'] = mb(paused.read());
      // Same bytes in and out only when passed through; a translation changes their size.
      if (NATIVE[kind] === client) breakdown['held by the gateway'] = mb(result!.sent - upstreamKernel - clientKernel - paused.read());
    }
    measured[`backpressure ${client} → ${kind} (MB)`] = breakdown;
    expect(result!.sent).toBeLessThan(BACKPRESSURE_BOUND);
    if (breakdown['held by the gateway'] !== undefined) expect(breakdown['held by the gateway']).toBeLessThan(GATEWAY_HELD_BOUND_MB);
    paused.destroy();
    await within(upstream.closed, ABORT_TO_CLOSE_MS, 'the upstream connection close');
  });
});

// ---- 1,000 aborted streams -------------------------------------------------------------------

describe('after 1,000 aborted streams', () => {
  it('upstream sockets, pool connections and timers are back to their baseline', async () => {
    served.server.closeIdleConnections();
    await waitUntil(() => raw.openSockets() === 0, 3000);
    const baselineSockets = raw.openSockets();
    const baseline = activeResources();
    const usageBefore = usage.length;

    const total = 1000;
    const concurrency = 50;
    let next = 0;
    const started = performance.now();
    const worker = async () => {
      for (let i = next++; i < total; i = next++) {
        const [client, kind] = cells[i % cells.length]!;
        const controller = new AbortController();
        const response = await send(served.url, client, bodyOf(client, MODELS[kind], marker('opened'), true), KEY, { signal: controller.signal });
        const reader = response.body!.getReader();
        await reader.read();
        controller.abort();
        await reader.closed.catch(() => {});
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    measured['1,000 aborted streams (s)'] = round((performance.now() - started) / 1000);

    await waitUntil(() => raw.openSockets() === baselineSockets, 5000);
    expect(raw.openSockets()).toBe(baselineSockets);
    // Spare connections undici opened after aborted bodies idle out with the pool's 500 ms keep-alive.
    await waitUntil(() => poolConnections() === 0, 5000);
    expect(agent.stats).toBeDefined();
    expect(poolConnections()).toBe(0);
    const after = await settleTo(baseline, ['Timeout', 'TCPSocketWrap', 'Immediate'], 5000, () => served.server.closeIdleConnections());
    measured['active resources before / after'] = { before: baseline, after };
    for (const type of ['Timeout', 'TCPSocketWrap', 'Immediate']) expect(after[type] ?? 0, type).toBeLessThanOrEqual(baseline[type] ?? 0);

    await waitUntil(() => usage.length - usageBefore >= total, 3000);
    expect(usage.length - usageBefore).toBe(total);
    expect(log.entries.filter((entry) => entry.message === 'unexpected error')).toEqual([]);
  }, 30_000);
});

/** Connections the undici pool holds open (connected, free or busy), over every origin. */
function poolConnections(): number {
  return Object.values(agent.stats).reduce((sum, stats) => sum + Number(stats.connected), 0);
}

function round(value: number | undefined): number | undefined {
  return value === undefined ? undefined : Math.round(value * 10) / 10;
}
