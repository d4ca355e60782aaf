import { fork, type ChildProcess } from 'node:child_process';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGateway, type Gateway } from '../../src/gateway.js';
import { createAnthropicProvider } from '../../src/providers/anthropic/anthropic-provider.js';
import { createOpenAIProvider } from '../../src/providers/openai/openai-provider.js';
import { serve, type Served } from '../helpers/serve.js';
import type { PeerCommand, PeerReady, PeerResult } from './payload-peer.js';

/**
 * Large payloads (issue 7, part 7; issue 14, part 4): a 20 MB base64 image in a chat request,
 * passed through and translated, and in an Anthropic client's request to a chat upstream, and a
 * 50 MB edit upload, each sent while another stream is relayed (one chunk every
 * 10 ms). The upstream must get the bytes intact and the other stream must complete.
 *
 * Speed is measured, not asserted (a loaded CI machine would make any bound flaky): the gateway's
 * event-loop delay (max, p99), the worst gap between chunks of the other stream and the heap +
 * external memory growth are printed per case. Only the gateway runs in this process: the fakes
 * and the client of the big requests run in `payload-peer.ts`, in a process of their own.
 */

const IMAGE_BYTES = 15 * 1024 * 1024; // 20 MiB once base64
const UPLOAD_BYTES = 50 * 1024 * 1024;
const TICK_MS = 10;

let peer: ChildProcess;
let peerURLs: PeerReady;
let slow: SlowUpstream;
let gateway: Gateway;
let served: Served;

beforeAll(async () => {
  [peer, peerURLs] = await startPeer();
  slow = await startSlowUpstream();
  gateway = createGateway({
    keys: [{ key: 'sk-test' }],
    providers: {
      'oai-chat': createOpenAIProvider({ baseURL: peerURLs.chatURL + '/v1', apiKey: 'up-key', responses: false }),
      claude: createAnthropicProvider({ baseURL: peerURLs.anthropicURL, apiKey: 'up-key' }),
      'oai-media': createOpenAIProvider({ baseURL: peerURLs.mediaBaseURL, apiKey: 'sk-upstream-openai' }),
      slow: createOpenAIProvider({ baseURL: slow.url + '/v1', apiKey: 'up-key', responses: false }),
    },
    models: [
      { id: 'gpt-chat', provider: 'oai-chat', upstreamModel: 'gpt-4.1' },
      { id: 'claude', provider: 'claude', upstreamModel: 'claude-sonnet-4-5' },
      { id: 'oai-image', provider: 'oai-media', kind: 'image', upstreamModel: 'gpt-image-1.5' },
      { id: 'ticker', provider: 'slow', upstreamModel: 'ticker-1' },
    ],
    limits: { uploadFileBytes: 64 * 1024 * 1024 },
    logger: false,
  });
  served = await serve(gateway);
}, 60_000);

afterAll(async () => {
  await served?.close();
  await Promise.all(Object.values(gateway?.options.providers ?? {}).map((provider) => provider.close?.()));
  await slow?.close();
  if (peer?.connected) {
    peer.send({ kind: 'close' } satisfies Omit<PeerCommand, 'id'> as PeerCommand);
    await new Promise((resolve) => peer.once('exit', resolve));
  }
});

describe('large payloads pass without stalling other streams', () => {
  it('a 20 MB base64 image, chat client → chat upstream (passthrough)', async () => {
    const { result, measured } = await duringTicker(() =>
      ask({ kind: 'image', url: served.url, model: 'gpt-chat', client: 'chat', upstream: 'chat', imageBytes: IMAGE_BYTES }),
    );
    report('20 MB image, chat → chat (passthrough)', result, measured);
    expect(result.status, result.answer).toBe(200);
    expect(result.upstreamModel).toBe('gpt-4.1');
    expect(result.receivedHash).toBe(result.sentHash);
  });

  it('a 20 MB base64 image, chat client → Anthropic upstream (translated)', async () => {
    const { result, measured } = await duringTicker(() =>
      ask({ kind: 'image', url: served.url, model: 'claude', client: 'chat', upstream: 'anthropic', imageBytes: IMAGE_BYTES }),
    );
    report('20 MB image, chat → anthropic (translated)', result, measured);
    expect(result.status, result.answer).toBe(200);
    expect(result.upstreamModel).toBe('claude-sonnet-4-5');
    expect(result.receivedHash).toBe(result.sentHash);
  });

  it('a 20 MB base64 image, Anthropic (Messages) client → chat upstream (translated into a data URL)', async () => {
    const { result, measured } = await duringTicker(() =>
      ask({ kind: 'image', url: served.url, model: 'gpt-chat', client: 'messages', upstream: 'chat', imageBytes: IMAGE_BYTES }),
    );
    report('20 MB image, messages → chat (translated)', result, measured);
    expect(result.status, result.answer).toBe(200);
    expect(result.upstreamModel).toBe('gpt-4.1');
    expect(result.receivedHash).toBe(result.sentHash);
  });

  it('a 50 MB image edit upload (multipart) to an OpenAI upstream', async () => {
    const { result, measured } = await duringTicker(() => ask({ kind: 'edit-upload', url: served.url, model: 'oai-image', fileBytes: UPLOAD_BYTES }));
    report('50 MB edit upload, multipart → openai', result, measured);
    expect(result.status, result.answer).toBe(200);
    expect(result.upstreamModel).toBe('gpt-image-1.5');
    expect(result.receivedHash).toBe(result.sentHash);
  });
});

// ---- measurement --------------------------------------------------------------------------------

interface Measured {
  eventLoopMaxMs: number;
  eventLoopP99Ms: number;
  /** Longest wait between two chunks of the other stream while the big request was in flight. */
  streamGapMaxMs: number;
  /** Growth of heap used + external memory over the value before the request, sampled every 5 ms. */
  memoryPeakMB: number;
}

/**
 * Runs `work` while a ticker stream (one chunk every 10 ms) is relayed through the gateway, and
 * measures the gateway process meanwhile. The stream must end complete.
 */
async function duringTicker<T>(work: () => Promise<T>): Promise<{ result: T; measured: Measured }> {
  const response = await fetch(`${served.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: 'Bearer sk-test', 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'ticker', messages: [{ role: 'user', content: 'tick' }], stream: true }),
  });
  expect(response.status).toBe(200);
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  const arrivals: number[] = [];
  let text = '';
  const first = await reader.read();
  text += decoder.decode(first.value, { stream: true });
  const drained = (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      arrivals.push(performance.now());
      text += decoder.decode(value, { stream: true });
    }
  })();

  const baseline = memory();
  let peak = baseline;
  const sampler = setInterval(() => (peak = Math.max(peak, memory())), 5);
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  const started = performance.now();
  let result: T;
  try {
    result = await work();
  } finally {
    histogram.disable();
    clearInterval(sampler);
  }
  const ended = performance.now();
  const ticks = slow.stop();
  await drained;

  // The gap ending with each arrival during the request, and the first arrival after it.
  let streamGapMaxMs = 0;
  let previous = started;
  for (const at of arrivals) {
    if (at < started) continue;
    streamGapMaxMs = Math.max(streamGapMaxMs, at - previous);
    previous = at;
    if (at > ended) break;
  }
  expect(text, 'the other stream completed with every chunk').toContain('data: [DONE]');
  expect(text.match(/"content":"tick \d+ "/g)?.length).toBe(ticks);
  return {
    result,
    measured: {
      eventLoopMaxMs: histogram.max / 1e6,
      eventLoopP99Ms: histogram.percentile(99) / 1e6,
      streamGapMaxMs,
      memoryPeakMB: (peak - baseline) / 2 ** 20,
    },
  };
}

function memory(): number {
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.external;
}

function report(what: string, result: PeerResult, measured: Measured): void {
  const mb = (result.sentBytes / 2 ** 20).toFixed(1);
  console.log(
    `[large payloads] ${what}: HTTP ${result.status} in ${result.latencyMs.toFixed(0)} ms (${mb} MB sent); ` +
      `event loop max ${measured.eventLoopMaxMs.toFixed(1)} ms, p99 ${measured.eventLoopP99Ms.toFixed(1)} ms; ` +
      `other stream worst gap ${measured.streamGapMaxMs.toFixed(1)} ms (chunks every ${TICK_MS} ms); ` +
      `memory peak +${measured.memoryPeakMB.toFixed(0)} MB`,
  );
}

// ---- the peer process -------------------------------------------------------------------------

let nextId = 1;
const pending = new Map<number, (message: PeerResult | { id: number; error: string }) => void>();

type PeerRequest = PeerCommand extends infer C ? (C extends { kind: 'close' } ? never : Omit<C, 'id'>) : never;

function ask(command: PeerRequest): Promise<PeerResult> {
  const id = nextId++;
  return new Promise((resolve, reject) => {
    pending.set(id, (message) => ('error' in message ? reject(new Error(`peer: ${message.error}`)) : resolve(message)));
    peer.send({ ...command, id } as PeerCommand);
  });
}

async function startPeer(): Promise<[ChildProcess, PeerReady]> {
  const child = fork(fileURLToPath(new URL('./payload-peer.ts', import.meta.url)), [], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const ready = await new Promise<PeerReady>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`the peer process exited (${code}) before it was ready`)));
    child.once('message', (message) => resolve(message as PeerReady));
  });
  child.removeAllListeners('exit');
  child.on('message', (message: PeerResult | { id: number; error: string }) => {
    pending.get(message.id)?.(message);
    pending.delete(message.id);
  });
  return [child, ready];
}

// ---- the ticker upstream ----------------------------------------------------------------------

interface SlowUpstream {
  url: string;
  /** Ends the current stream after its next tick; returns how many content chunks it sent. */
  stop(): number;
  close(): Promise<void>;
}

/** A chat-only upstream in this process whose stream sends one chunk every 10 ms until stopped. */
async function startSlowUpstream(): Promise<SlowUpstream> {
  let active: { response: ServerResponse; timer: NodeJS.Timeout; ticks: number } | undefined;
  const chunk = (delta: Record<string, unknown>, finish: string | null) =>
    `data: ${JSON.stringify({ id: 'chatcmpl-ticker', object: 'chat.completion.chunk', created: 1_700_000_000, model: 'ticker-1', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const server: Server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write(chunk({ role: 'assistant', content: '' }, null));
      const stream = { response, ticks: 0, timer: setInterval(() => response.write(chunk({ content: `tick ${++stream.ticks} ` }, null)), TICK_MS) };
      active = stream;
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stop() {
      const stream = active!;
      active = undefined;
      clearInterval(stream.timer);
      stream.response.end(chunk({}, 'stop') + 'data: [DONE]\n\n');
      return stream.ticks;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
