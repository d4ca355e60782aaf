import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGateway, type Gateway } from '../../src/gateway.js';
import type { UsageEvent } from '../../src/options.js';
import { createAnthropicProvider } from '../../src/providers/anthropic/anthropic-provider.js';
import { createOpenAIProvider } from '../../src/providers/openai/openai-provider.js';
import { startRawUpstream, type RawExchange, type RawUpstream } from '../fakes/raw-upstream.js';
import { serve, type Served } from '../helpers/serve.js';
import { CLIENTS, UPSTREAMS, type ClientProtocol, type UpstreamKind } from '../upstreams/harness.js';
import {
  activeResources,
  bodyOf,
  captureLogger,
  closedPort,
  isSdkApiError,
  outcomeOf,
  sdkClients,
  sdkError,
  send,
  sendFrames,
  settleTo,
  within,
  type Outcome,
  type SdkClients,
  waitUntil,
} from './helpers.js';
import { BEFORE_TEXT, errorBody, jsonAnswer, kindOfPath, streamErrorFrame, streamFrames } from './wire.js';

/**
 * The upstream fault matrix (issue 7, part 3): every fault × client protocol × upstream protocol,
 * JSON and streaming where the fault exists for both. A raw upstream writes exactly the broken
 * bytes. Each cell is driven twice, over plain fetch (to check the exact error shape) and through
 * the official SDK's stream helper (which must throw, never end as a success), and checks that
 * `onUsage` fired once per request and that the upstream connection was closed.
 */

const KEY = 'sk-faults';
/** Short upstream timeouts, so silence turns into 504 quickly. */
const TIMEOUTS = { headersMs: 400, bodyMs: 400 };
const MODELS: Record<UpstreamKind, string> = { chat: 'raw-chat', responses: 'raw-resp', anthropic: 'raw-claude' };
const GONE: Record<UpstreamKind, string> = { chat: 'gone-chat', responses: 'gone-resp', anthropic: 'gone-claude' };
const TEXT = ['Once', ' upon', ' a', ' time'];

let raw: RawUpstream;
let gateway: Gateway;
let served: Served;
let sdk: SdkClients;
let baseline: Record<string, number>;
const usage: UsageEvent[] = [];
const log = captureLogger();

beforeAll(async () => {
  raw = await startRawUpstream();
  raw.script = dispatch;
  const gone = `http://127.0.0.1:${await closedPort()}`;
  gateway = createGateway({
    keys: [{ key: KEY }],
    providers: {
      'raw-chat': createOpenAIProvider({ baseURL: raw.url + '/v1', apiKey: 'up-key', responses: false, timeouts: TIMEOUTS }),
      'raw-resp': createOpenAIProvider({ baseURL: raw.url + '/v1', apiKey: 'up-key', responses: true, chat: false, timeouts: TIMEOUTS }),
      'raw-claude': createAnthropicProvider({ baseURL: raw.url, apiKey: 'up-key', timeouts: TIMEOUTS }),
      'gone-chat': createOpenAIProvider({ baseURL: gone + '/v1', apiKey: 'up-key', responses: false }),
      'gone-resp': createOpenAIProvider({ baseURL: gone + '/v1', apiKey: 'up-key', responses: true, chat: false }),
      'gone-claude': createAnthropicProvider({ baseURL: gone, apiKey: 'up-key' }),
    },
    models: [
      ...UPSTREAMS.map((kind) => ({ id: MODELS[kind], provider: MODELS[kind], upstreamModel: kind === 'anthropic' ? 'claude-sonnet-4-5' : 'gpt-5' })),
      ...UPSTREAMS.map((kind) => ({ id: GONE[kind], provider: GONE[kind], upstreamModel: 'm' })),
    ],
    logger: log.logger,
    // One attempt per request: each fault is seen as it is, not hidden by a retry.
    policies: { retry: { retries: 0 } },
    hooks: { onUsage: (event) => void usage.push(event) },
  });
  served = await serve(gateway);
  sdk = sdkClients(served.url, KEY);
  // One clean exchange first: pools, parsers and lazy modules are set up before the baseline.
  await (await send(served.url, 'chat', bodyOf('chat', MODELS.chat, 'warm-up', false), KEY)).text();
  served.server.closeIdleConnections();
  await settleTo({}, ['TCPSocketWrap'], 500);
  baseline = activeResources();
});

afterAll(async () => {
  await served?.close();
  // The last test closed the pools already when it ran; closing twice is harmless here.
  await Promise.all(Object.values(gateway?.options.providers ?? {}).map((provider) => provider.close?.().catch(() => {})));
  await raw?.close();
});

// ---- the faults ------------------------------------------------------------------------------

interface Fault {
  id: string;
  title: string;
  /** Request modes the fault exists in. */
  streams: readonly boolean[];
  /** What the raw upstream does. */
  script?: (exchange: RawExchange, kind: UpstreamKind, stream: boolean) => Promise<void> | void;
  /** The requests go to an address nothing listens on. */
  refused?: boolean;
  /** Statuses allowed for an error before the stream started; `ok` for faults that must still succeed. */
  expect: readonly number[] | 'ok';
  /** The client's error message must match (upstream messages are kept). */
  message?: RegExp;
  /** The gateway must hang up on the upstream before it sent everything (it stops reading). */
  hangsUp?: boolean;
  /** Cells one at a time (tens of MB each: concurrently they only measure the CPU). */
  sequential?: boolean;
  /**
   * Longest a cell (both requests) may take. A 32 MiB frame once cost 15 s of blocked event loop
   * (each read copied and rescanned everything held); linear work takes well under a second.
   */
  maxMs?: number;
}

/** Past the gateway's limits: `limits.jsonBodyBytes` (32 MiB) for passthrough, 16 MiB translated. */
const HUGE = 40 * 1024 * 1024;

/** Writes `total` bytes of `fill` (after `head`), as fast as the connection takes them; true if all went out. */
async function pour(exchange: RawExchange, head: string, fill: string, total: number, chunked: boolean): Promise<boolean> {
  const piece = Buffer.alloc(256 * 1024, fill);
  let sent = 0;
  const write = (bytes: string | Buffer) => (chunked ? exchange.chunk(bytes) : exchange.raw(bytes));
  write(head);
  while (sent < total && !exchange.gone) {
    sent += piece.length;
    if (!write(piece) && !(await exchange.drained(5000))) return false;
  }
  return sent >= total && !exchange.gone;
}

/** Sends the frames of an answer cut after the first text delta. */
const throughFirstDelta = (exchange: RawExchange, kind: UpstreamKind) => sendFrames(exchange, streamFrames(kind, TEXT).slice(0, BEFORE_TEXT[kind] + 1));

/** Writes `bytes` a piece every `gapMs`: pieces of `size` bytes, split wherever that falls. */
async function trickle(exchange: RawExchange, bytes: Buffer, size: number, gapMs: number, chunked: boolean): Promise<void> {
  for (let at = 0; at < bytes.length && !exchange.gone; at += size) {
    const piece = bytes.subarray(at, at + size);
    if (chunked) exchange.chunk(piece);
    else exchange.raw(piece);
    await sleep(gapMs);
  }
}

const FAULTS: Fault[] = [
  {
    id: 'refused',
    title: 'connection refused',
    streams: [false, true],
    refused: true,
    expect: [502],
  },
  {
    id: 'reset-early',
    title: 'connection reset before the headers',
    streams: [false, true],
    script: (exchange) => exchange.reset(),
    expect: [502],
  },
  {
    id: 'reset-mid-body',
    title: 'connection reset mid-body',
    streams: [false, true],
    async script(exchange, kind, stream) {
      if (stream) {
        exchange.sseHead();
        await throughFirstDelta(exchange, kind);
        const next = streamFrames(kind, TEXT)[BEFORE_TEXT[kind] + 1]!;
        exchange.chunk(next.slice(0, next.length >> 1));
      } else {
        const payload = JSON.stringify(jsonAnswer(kind, TEXT.join('')));
        exchange.head(200, { 'content-type': 'application/json', 'content-length': String(payload.length) });
        exchange.raw(payload.slice(0, payload.length >> 1));
      }
      await sleep(5);
      exchange.reset();
    },
    expect: [502],
  },
  {
    id: 'silent-after-headers',
    title: 'headers, then silence',
    streams: [false, true],
    script(exchange, _kind, stream) {
      if (stream) exchange.sseHead();
      else exchange.head(200, { 'content-type': 'application/json', 'content-length': '400' });
    },
    expect: [504],
  },
  {
    id: 'silent-mid-stream',
    title: 'silence in the middle of a stream',
    streams: [true],
    async script(exchange, kind) {
      exchange.sseHead();
      await throughFirstDelta(exchange, kind);
    },
    expect: [504],
  },
  {
    id: 'cut',
    title: 'a stream that ends cleanly without its terminal event',
    streams: [true],
    async script(exchange, kind) {
      exchange.sseHead();
      await throughFirstDelta(exchange, kind);
      exchange.endChunked();
    },
    expect: [502],
  },
  {
    id: 'invalid-json',
    title: 'a 200 whose JSON body is invalid',
    streams: [false],
    script: (exchange) => exchange.json(200, '{"id":"chatcmpl-raw","choices":[{"index":0,"message":{"content":"Once'),
    expect: [502],
  },
  {
    id: 'html',
    title: 'a 200 HTML page instead of the answer',
    streams: [false, true],
    script(exchange) {
      exchange.chunkedHead(200, 'text/html');
      exchange.chunk('<html><body><h1>502 Bad Gateway</h1></body></html>\n\n');
      exchange.endChunked();
    },
    expect: [502],
  },
  {
    id: 'invalid-sse',
    title: 'an event whose data is not JSON, the rest of the stream intact',
    streams: [true],
    async script(exchange, kind) {
      const frames = streamFrames(kind, TEXT);
      const at = BEFORE_TEXT[kind] + 1;
      exchange.sseHead();
      await sendFrames(exchange, [...frames.slice(0, at), 'data: {not json\n\n', ...frames.slice(at)]);
      exchange.endChunked();
    },
    expect: [502],
  },
  {
    id: 'error-event',
    title: 'an error event inside a 200 stream',
    streams: [true],
    async script(exchange, kind) {
      exchange.sseHead();
      await throughFirstDelta(exchange, kind);
      await sendFrames(exchange, [streamErrorFrame(kind, 'upstream broke mid-answer')]);
      exchange.endChunked();
    },
    expect: [502],
    message: /upstream broke mid-answer/,
  },
  {
    id: 'error-first',
    title: 'a 200 stream whose first event is an error',
    streams: [true],
    async script(exchange, kind) {
      exchange.sseHead();
      await sendFrames(exchange, [streamErrorFrame(kind, 'upstream refused to start')]);
      exchange.endChunked();
    },
    expect: [502],
    message: /upstream refused to start/,
  },
  {
    id: 'error-200',
    title: 'a 200 whose body is an error',
    streams: [false, true],
    script: (exchange, kind) => exchange.json(200, errorBody(kind, 'quota broke with a 200')),
    expect: [502],
    message: /quota broke with a 200/,
  },
  {
    id: 'huge-json',
    title: 'a 40 MB JSON answer',
    streams: [false],
    async script(exchange) {
      exchange.head(200, { 'content-type': 'application/json', 'content-length': String(HUGE + 19) });
      if (await pour(exchange, '{"id":"x","text":"', 'a', HUGE, false)) exchange.end();
    },
    expect: [502],
    message: /larger than the gateway accepts/,
    hangsUp: true,
    sequential: true,
    maxMs: 5000,
  },
  {
    id: 'endless-event',
    title: 'a stream event that never ends (40 MB without a newline)',
    streams: [true],
    async script(exchange, kind) {
      exchange.sseHead();
      await throughFirstDelta(exchange, kind);
      if (await pour(exchange, 'data: {"x":"', 'a', HUGE, true)) exchange.endChunked();
    },
    expect: [502],
    message: /larger than the gateway accepts/,
    hangsUp: true,
    sequential: true,
    maxMs: 5000,
  },
  ...(['lf', 'crlf'] as const).map(
    (ending): Fault => ({
      id: `split-${ending}`,
      title: `every blank line split across two reads (${ending === 'lf' ? 'LF' : 'CRLF'} frames)`,
      streams: [true],
      async script(exchange, kind) {
        let bytes = streamFrames(kind, TEXT).join('');
        if (ending === 'crlf') bytes = bytes.replace(/\n/g, '\r\n');
        const blank = ending === 'lf' ? '\n\n' : '\r\n\r\n';
        exchange.sseHead();
        // Cut inside each blank line, at a different offset each time (CRLF: after 1, 2 or 3 bytes).
        let from = 0;
        for (let at = bytes.indexOf(blank), n = 0; at >= 0; at = bytes.indexOf(blank, at + blank.length), n++) {
          const cut = at + 1 + (n % (blank.length - 1));
          await sendFrames(exchange, [bytes.slice(from, cut)]);
          await sleep(2);
          from = cut;
        }
        await sendFrames(exchange, [bytes.slice(from)]);
        exchange.endChunked();
      },
      expect: 'ok',
    }),
  ),
  {
    id: 'trickle',
    title: 'a slow trickle (the whole answer, a few bytes every 20 ms, longer than the body timeout)',
    streams: [false, true],
    async script(exchange, kind, stream) {
      if (stream) {
        exchange.sseHead();
        const bytes = Buffer.from(streamFrames(kind, TEXT).join(''));
        // One byte per 20 ms across the first frame boundary, then bigger pieces (kept short in time).
        await trickle(exchange, bytes.subarray(0, 30), 1, 20, true);
        await trickle(exchange, bytes.subarray(30), Math.ceil((bytes.length - 30) / 40), 20, true);
        exchange.endChunked();
      } else {
        const payload = Buffer.from(JSON.stringify(jsonAnswer(kind, TEXT.join(''))));
        exchange.head(200, { 'content-type': 'application/json', 'content-length': String(payload.length) });
        await trickle(exchange, payload, Math.ceil(payload.length / 40), 20, false);
        exchange.finished();
        exchange.end();
      }
    },
    expect: 'ok',
  },
];

/** Runs the script of the fault named in the request's marker. */
function dispatch(exchange: RawExchange): Promise<void> | void {
  const match = /fault:([\w-]+)#/.exec(JSON.stringify(exchange.request.body ?? ''));
  const fault = FAULTS.find((candidate) => candidate.id === match?.[1]);
  const kind = kindOfPath(exchange.request.path);
  if (!fault?.script) return exchange.json(200, jsonAnswer(kind, 'no fault'));
  return fault.script(exchange, kind, exchange.request.body?.stream === true);
}

// ---- the matrix ------------------------------------------------------------------------------

let markers = 0;

interface CellResult {
  outcome: Outcome;
  thrown: unknown;
}

async function runCell(fault: Fault, client: ClientProtocol, kind: UpstreamKind, stream: boolean): Promise<CellResult> {
  const model = fault.refused ? GONE[kind] : MODELS[kind];
  const rawMarker = `fault:${fault.id}#${++markers}`;
  const sdkMarker = `fault:${fault.id}#${++markers}`;
  const started = performance.now();
  const outcome = await outcomeOf(client, await send(served.url, client, bodyOf(client, model, rawMarker, stream), KEY));
  const thrown = await sdkError(sdk, client, model, sdkMarker, stream);
  if (fault.maxMs) expect(performance.now() - started).toBeLessThan(fault.maxMs);

  // The usage hook: once for each request, `error` unless the answer was whole.
  const status = fault.expect === 'ok' ? 'ok' : 'error';
  const ids = [outcome.requestId, ...(isSdkApiError(client, thrown) ? [(thrown as { requestID?: string }).requestID ?? ''] : [])];
  for (const id of ids.filter(Boolean)) await waitUntil(() => usage.some((event) => event.requestId === id), 2000);
  await sleep(20);
  for (const id of ids.filter(Boolean)) {
    const events = usage.filter((event) => event.requestId === id);
    expect(events, `usage events of ${id}`).toHaveLength(1);
    expect(events[0]!.status).toBe(status);
  }

  // No upstream connection is left open once the client has its answer.
  const mine = raw.requests.filter((request) => {
    const text = JSON.stringify(request.body ?? '');
    return text.includes(rawMarker + '"') || text.includes(sdkMarker + '"');
  });
  if (!fault.refused) expect(mine.length).toBe(2);
  await within(Promise.all(mine.map((request) => request.closed)), 2000, 'the upstream connections closing');
  if (fault.hangsUp) expect(mine.map((request) => request.closedByPeer)).toEqual([true, true]);
  return { outcome, thrown };
}

function checkError(fault: Fault, client: ClientProtocol, { outcome, thrown }: CellResult): void {
  expect(outcome.kind, outcome.text.slice(0, 300)).toBe('error');
  if (outcome.kind !== 'error') return;
  if (outcome.phase === 'before') expect(fault.expect).toContain(outcome.status);
  if (fault.message) expect(outcome.message).toMatch(fault.message);
  expect(thrown, 'the SDK must throw').toBeDefined();
  expect(isSdkApiError(client, thrown), `the SDK threw ${String(thrown)}`).toBe(true);
}

function checkOk(client: ClientProtocol, stream: boolean, { outcome, thrown }: CellResult): void {
  expect(outcome.kind, outcome.text.slice(0, 300)).toBe('ok');
  expect(thrown).toBeUndefined();
  const text = stream ? deltas(client, outcome.text) : answerText(client, JSON.parse(outcome.text));
  expect(text).toBe(TEXT.join(''));
}

/** The answer's text from a stream, as a client concatenates it. */
function deltas(client: ClientProtocol, text: string): string {
  const datas = text
    .split('\n\n')
    .map((block) =>
      block
        .split('\n')
        .find((line) => line.startsWith('data: '))
        ?.slice(6),
    )
    .filter((data): data is string => data !== undefined && data !== '[DONE]')
    .map((data) => JSON.parse(data));
  if (client === 'chat') return datas.map((chunk) => chunk.choices?.[0]?.delta?.content ?? '').join('');
  if (client === 'responses')
    return datas
      .filter((event) => event.type === 'response.output_text.delta')
      .map((event) => event.delta)
      .join('');
  return datas
    .filter((event) => event.type === 'content_block_delta')
    .map((event) => event.delta.text ?? '')
    .join('');
}

function answerText(client: ClientProtocol, json: any): string {
  if (client === 'chat') return json.choices[0].message.content;
  if (client === 'responses') return json.output.flatMap((item: any) => item.content?.map((part: any) => part.text) ?? []).join('');
  return json.content.map((block: any) => block.text).join('');
}

for (const fault of FAULTS) {
  const cells = fault.streams.flatMap((stream) => CLIENTS.flatMap((client) => UPSTREAMS.map((kind) => [client, kind, stream] as const)));
  (fault.sequential ? describe : describe.concurrent)(fault.title, () => {
    it.each(cells)('%s client → %s upstream (stream: %s)', async (client, kind, stream) => {
      const result = await runCell(fault, client, kind, stream);
      if (fault.expect === 'ok') checkOk(client, stream, result);
      else checkError(fault, client, result);
    });
  });
}

describe('a frame whose blank line is split across two reads is forwarded at once', () => {
  // LF: `\n|\n`; CRLF: `\r|\n\r\n`, `\r\n|\r\n`, `\r\n\r|\n`.
  const splits = [
    ['lf', 1],
    ['crlf', 1],
    ['crlf', 2],
    ['crlf', 3],
  ] as const;
  const pairs = UPSTREAMS.flatMap((kind) => splits.map(([ending, back]) => [kind, ending, back] as const));
  it.each(pairs)('%s upstream, passed through (%s, the last %s bytes in the next read)', async (kind, ending, back) => {
    const client = ({ chat: 'chat', responses: 'responses', anthropic: 'messages' } as const)[kind];
    const crlf = (text: string) => (ending === 'crlf' ? text.replace(/\n/g, '\r\n') : text);
    const frames = streamFrames(kind, TEXT).map(crlf);
    const first = frames.slice(0, BEFORE_TEXT[kind] + 1).join('');
    let restAt = Infinity;
    raw.script = async (exchange) => {
      exchange.sseHead();
      // The first delta's frame ends in the next read, which also starts the next frame.
      exchange.chunk(first.slice(0, -back));
      await sleep(5);
      exchange.chunk(first.slice(-back) + frames[BEFORE_TEXT[kind] + 1]!.slice(0, 10));
      await sleep(300);
      restAt = performance.now();
      exchange.chunk(frames[BEFORE_TEXT[kind] + 1]!.slice(10) + frames.slice(BEFORE_TEXT[kind] + 2).join(''));
      exchange.endChunked();
    };
    try {
      const response = await send(served.url, client, bodyOf(client, MODELS[kind], 'split', true), KEY);
      const reader = response.body!.getReader();
      let seen = '';
      while (!seen.includes('Once')) seen += new TextDecoder().decode((await reader.read()).value);
      expect(performance.now()).toBeLessThan(restAt);
      await reader.cancel();
    } finally {
      raw.script = dispatch;
    }
  });
});

describe('an upstream whose lines end in a lone CR (valid SSE) is passed through', () => {
  const clientOf = { chat: 'chat', responses: 'responses', anthropic: 'messages' } as const;
  /**
   * The upstream's frames with CR line ends: through the first text delta and the start of the
   * next frame at once (a CR at the end of a read may be half a CRLF, so the byte after it tells),
   * the rest 300 ms later.
   */
  const crScript = (kind: UpstreamKind, sentRest: (at: number) => void) => async (exchange: RawExchange) => {
    const text = streamFrames(kind, TEXT)
      .map((frame) => frame.replace(/\n/g, '\r'))
      .join('');
    const firstDeltaEnd = streamFrames(kind, TEXT)
      .slice(0, BEFORE_TEXT[kind] + 1)
      .join('').length;
    exchange.sseHead();
    exchange.chunk(text.slice(0, firstDeltaEnd + 5));
    await sleep(300);
    sentRest(performance.now());
    exchange.chunk(text.slice(firstDeltaEnd + 5));
    exchange.endChunked();
  };

  it.each(UPSTREAMS)('%s upstream: each frame is forwarded as it comes, not held as one endless event', async (kind) => {
    let restAt = Infinity;
    raw.script = crScript(kind, (at) => (restAt = at));
    try {
      const client = clientOf[kind];
      const response = await send(served.url, client, bodyOf(client, MODELS[kind], 'cr', true), KEY);
      const reader = response.body!.getReader();
      let seen = '';
      while (!seen.includes('Once')) seen += new TextDecoder().decode((await reader.read()).value);
      expect(performance.now()).toBeLessThan(restAt);
      for (let read = await reader.read(); !read.done; read = await reader.read()) seen += new TextDecoder().decode(read.value);
      expect(seen).not.toMatch(/"error":\{|event: error/);
      expect(deltas(client, seen.replace(/\r/g, '\n'))).toBe(TEXT.join(''));
    } finally {
      raw.script = dispatch;
    }
  });

  it.each(UPSTREAMS)('%s upstream: the official SDK reads the whole answer, and a Chat client gets no usage it did not ask for', async (kind) => {
    raw.script = crScript(kind, () => {});
    try {
      let text = '';
      if (kind === 'chat') {
        const chunks = [];
        for await (const chunk of await sdk.openai.chat.completions.create({ model: MODELS.chat, messages: [{ role: 'user', content: 'cr' }], stream: true }))
          chunks.push(chunk);
        text = chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('');
        expect(chunks.filter((chunk) => chunk.choices.length === 0 || chunk.usage != null)).toEqual([]);
      } else if (kind === 'responses') {
        text = (await sdk.openai.responses.stream({ model: MODELS.responses, input: 'cr' }).finalResponse()).output_text;
      } else {
        const message = await sdk.anthropic.messages
          .stream({ model: MODELS.anthropic, max_tokens: 64, messages: [{ role: 'user', content: 'cr' }] })
          .finalMessage();
        text = message.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
      }
      expect(text).toBe(TEXT.join(''));
    } finally {
      raw.script = dispatch;
    }
  });
});

describe('after the whole matrix', () => {
  it('no upstream connection or timer is left behind', async () => {
    // Every connection that carried a request is closed. (Spare connections undici opened after
    // an aborted body and never used may idle in the pool until its keep-alive timeout.)
    await waitUntil(() => raw.describeOpen().every((connection) => connection.received === ''), 3000);
    expect(raw.describeOpen().filter((connection) => connection.received !== '')).toEqual([]);
    // Nothing is in flight: closing the pools is immediate and releases every socket.
    await within(Promise.all(Object.values(gateway.options.providers).map((provider) => provider.close?.())), 2000, 'the upstream pools closing');
    await waitUntil(() => raw.openSockets() === 0, 2000);
    expect(raw.openSockets()).toBe(0);
    // Keep-alive connections of the test's own clients are not the gateway's to close.
    const now = await settleTo(baseline, ['Timeout', 'TCPSocketWrap'], 5000, () => served.server.closeIdleConnections());
    const counts = JSON.stringify({ baseline, now });
    expect(now.Timeout ?? 0, counts).toBeLessThanOrEqual(baseline.Timeout ?? 0);
    expect(now.TCPSocketWrap ?? 0, counts).toBeLessThanOrEqual(baseline.TCPSocketWrap ?? 0);
  });

  it('no request crashed the gateway (nothing was masked as an internal error)', () => {
    expect(log.entries.filter((entry) => entry.message === 'unexpected error')).toEqual([]);
  });
});
