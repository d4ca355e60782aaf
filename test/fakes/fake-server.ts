import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

type Json = Record<string, any>;

/**
 * What a fake upstream answers to the next valid request, in protocol-neutral terms: each fake
 * renders it in its own wire format (Chat chunks, Responses events, Anthropic events), as JSON
 * or as a stream depending on the request's `stream`. One script therefore drives every cell of
 * the client × upstream matrix.
 */
export interface Reply {
  /** Text of the answer, one entry per streamed delta. */
  text?: string[];
  /** Reasoning (Responses summary, Anthropic thinking with a signature), one entry per delta. */
  reasoning?: string[];
  /** Tool calls in order, each with its argument fragments; ids default to the upstream's style. */
  toolCalls?: { id?: string; name: string; args: string[] }[];
  /** Token counts in OpenAI semantics: `input` includes the cached and cache-write tokens. */
  usage?: NeutralUsage;
  /** `length`: the answer hit max tokens. */
  finish?: 'length';
  /** Answer with this HTTP error (the protocol's error body) instead. */
  error?: UpstreamErrorSpec;
  /** Stream only: after this many frames, send the protocol's in-stream error instead of the rest. */
  streamError?: { after: number } & UpstreamErrorSpec;
  /** After this many frames (or half the JSON body), destroy the socket. */
  cutAfter?: number;
  /** Stream only: after this many frames, keep the connection open and silent. */
  stallAfter?: number;
  /** Never send the response headers. */
  hang?: boolean;
  /**
   * Wait this long before the answer's first byte: a stream's headers go at once and its first
   * frame after the wait (as a busy upstream's first token), a JSON answer comes whole after it.
   * The wait ends when the client hangs up.
   */
  firstByteAfterMs?: number;
  /** Stream only: wait this long between frames (a slow stream once it started). */
  frameGapMs?: number;
  /** A recorded stream (SSE text) replayed verbatim instead of rendering the reply. */
  raw?: string;
}

export interface NeutralUsage {
  input: number;
  cachedRead?: number;
  cacheWrite?: number;
  output: number;
  reasoning?: number;
}

export interface UpstreamErrorSpec {
  status?: number;
  message: string;
  type?: string;
  code?: string | null;
  headers?: Record<string, string>;
}

export interface RecordedRequest {
  method: string;
  /** The path without the query string. */
  path: string;
  /** The request target as sent, query string included. */
  url: string;
  headers: Record<string, string>;
  /** The parsed JSON body (undefined when it was not JSON). */
  body: any;
  /** Why the fake rejected it as the real API would (status ≥ 400), if it did. */
  rejected?: { status: number; message: string };
  /** The connection closed before the fake finished its answer (and the fake did not cut it). */
  closedEarly: boolean;
  /** ms since epoch when the request arrived. */
  receivedAt: number;
  /** Resolves once the response is finished or its connection closed. */
  closed: Promise<void>;
}

/** An HTTP answer of a fake, before the cut/stall/error script is applied. */
export interface Rendered {
  status: number;
  headers: Record<string, string>;
  /** SSE frames, each ending with a blank line. */
  frames?: string[];
  json?: unknown;
}

/** Thrown by a fake's validator: the error the real API answers to such a request. */
export class Rejection extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly fields: { type?: string; param?: string | null; code?: string | null } = {},
  ) {
    super(message);
  }
}

/** One protocol family served by a fake: validation, rendering and error shapes. */
export interface FakeProtocol {
  /**
   * Answers a request outside the scripted generations (token counts, stored resources) without
   * taking a reply from the script; undefined hands it to `validate`. Throws `Rejection`.
   */
  serve?(request: RecordedRequest): Rendered | undefined;
  /** Checks a request as the real API does; throws `Rejection`. Returns the endpoint it serves. */
  validate(request: RecordedRequest): string;
  render(endpoint: string, body: Json, reply: Reply): Rendered;
  /** Whether the request asks for a stream, when the body's `stream` does not say (Gemini: the method and `alt=sse`). */
  streams?(endpoint: string, request: RecordedRequest): boolean;
  /** The protocol's in-stream error frames. */
  streamErrorFrames(endpoint: string, error: UpstreamErrorSpec): string[];
  errorResponse(
    status: number,
    message: string,
    fields: { type?: string; param?: string | null; code?: string | null },
    headers?: Record<string, string>,
  ): Rendered;
}

export interface FakeUpstream {
  url: string;
  /** Every request received, in order, valid or not. */
  readonly requests: RecordedRequest[];
  /** Queues replies; each valid request takes the next one (a plain text answer when none is left). */
  reply(...replies: Reply[]): void;
  /**
   * Answers every valid request with what `decide` makes of it, instead of the queue: a script
   * that reads the request alone, so a client's retries and side requests get consistent answers.
   */
  answerWith(decide: (request: RecordedRequest) => Reply): void;
  /** The requests the fake accepted (passed validation). */
  accepted(): RecordedRequest[];
  /** The last accepted request; throws (listing the rejections) when there is none. */
  last(): RecordedRequest;
  /** The most requests the fake has had open at once since the last reset. */
  readonly peakConcurrency: number;
  /**
   * Holds the answers to accepted requests until no new request has come for a moment, then
   * answers them all: whatever a client sends at once is open at once (see `peakConcurrency`).
   */
  holdUntilQuiet(on: boolean): void;
  reset(): void;
  close(): Promise<void>;
}

const DEFAULT_REPLY: Reply = { text: ['Hello', ' from', ' upstream.'], usage: { input: 12, output: 4 } };

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * What a fake records of one request: its head, its body as JSON when it parses, and whether the
 * connection closed before the answer was finished (`cutByFake` tells a cut the fake made itself).
 */
export function recordRequest(req: IncomingMessage, res: ServerResponse, text: string, cutByFake: () => boolean): RecordedRequest {
  let body: unknown;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    body = undefined;
  }
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  let resolveClosed!: () => void;
  const record: RecordedRequest = {
    method: req.method ?? '',
    path: (req.url ?? '').split('?')[0]!,
    url: req.url ?? '',
    headers,
    body,
    closedEarly: false,
    receivedAt: Date.now(),
    closed: new Promise<void>((resolve) => (resolveClosed = resolve)),
  };
  res.on('close', () => {
    if (!res.writableFinished && !cutByFake()) record.closedEarly = true;
    resolveClosed();
  });
  return record;
}

/**
 * How many requests a fake has open at once (`peakConcurrency`), and the hold that makes it see
 * a client's true fan-out (`holdUntilQuiet`): answers wait until no request has arrived for 25 ms.
 */
export function concurrencyProbe() {
  let open = 0;
  let peak = 0;
  let holding = false;
  let held: (() => void)[] = [];
  let quiet: NodeJS.Timeout | undefined;
  return {
    /** Counts `res` as open until its connection closes. */
    opened(res: ServerResponse): void {
      peak = Math.max(peak, ++open);
      res.on('close', () => open--);
    },
    /** Resolves once no request has arrived for 25 ms (when holding), with every request held so far. */
    heldUntilQuiet(): Promise<void> | undefined {
      if (!holding) return undefined;
      return new Promise<void>((resolve) => {
        held.push(resolve);
        clearTimeout(quiet);
        quiet = setTimeout(() => {
          const release = held;
          held = [];
          for (const resume of release) resume();
        }, 25);
      });
    },
    hold(on: boolean): void {
      holding = on;
    },
    get peak(): number {
      return peak;
    },
    reset(): void {
      peak = open;
      holding = false;
    },
  };
}

/** A fake upstream: a real HTTP server on loopback that validates, records and answers per script. */
export async function startFake(protocol: FakeProtocol): Promise<FakeUpstream> {
  const requests: RecordedRequest[] = [];
  let queue: Reply[] = [];
  let decide: ((request: RecordedRequest) => Reply) | undefined;
  const probe = concurrencyProbe();

  const server = createServer((req, res) => {
    void handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(`fake upstream bug: ${String(error)}`);
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    let cutByFake = false;
    const record = recordRequest(req, res, text, () => cutByFake);
    const body = record.body;
    probe.opened(res);
    requests.push(record);

    let endpoint: string;
    try {
      if (text !== '' && body === undefined) throw new Rejection(400, 'We could not parse the JSON body of your request.');
      const served = protocol.serve?.(record);
      if (served) return send(res, served);
      endpoint = protocol.validate(record);
    } catch (error) {
      if (!(error instanceof Rejection)) throw error;
      record.rejected = { status: error.status, message: error.message };
      return send(res, protocol.errorResponse(error.status, error.message, error.fields));
    }

    await probe.heldUntilQuiet();
    const reply = decide ? decide(record) : (queue.shift() ?? DEFAULT_REPLY);
    if (reply.hang) return; // the headers never come; the client's timeout or abort ends it
    if (reply.error) {
      const { status = 500, message, headers: extra, ...fields } = reply.error;
      return send(res, protocol.errorResponse(status, message, fields, extra));
    }

    const streaming = protocol.streams ? protocol.streams(endpoint, record) : (body as Json).stream === true;
    const rendered = reply.raw !== undefined ? replayed(reply.raw, streaming) : protocol.render(endpoint, body as Json, reply);
    if (!rendered.frames) {
      if (reply.firstByteAfterMs !== undefined && !(await waitUnlessClosed(res, reply.firstByteAfterMs))) return;
      const payload = JSON.stringify(rendered.json);
      if (reply.cutAfter !== undefined) {
        res.writeHead(rendered.status, { ...rendered.headers, 'content-length': String(Buffer.byteLength(payload)) });
        res.write(payload.slice(0, payload.length >> 1));
        await tick();
        cutByFake = true;
        res.socket?.destroy();
        return;
      }
      return send(res, rendered);
    }

    let frames = rendered.frames;
    if (reply.streamError) frames = [...frames.slice(0, reply.streamError.after), ...protocol.streamErrorFrames(endpoint, reply.streamError)];
    const stop = reply.cutAfter ?? reply.stallAfter;
    if (stop !== undefined) frames = frames.slice(0, stop);

    res.writeHead(rendered.status, rendered.headers);
    res.flushHeaders();
    if (reply.firstByteAfterMs !== undefined && !(await waitUnlessClosed(res, reply.firstByteAfterMs))) return;
    for (const [index, frame] of frames.entries()) {
      if (index > 0 && reply.frameGapMs !== undefined) await waitUnlessClosed(res, reply.frameGapMs);
      if (res.destroyed) return;
      // Each frame in two writes split mid-frame (mid-character for non-ASCII): TCP reads are
      // never aligned with SSE frames, and readers must reassemble them.
      const bytes = Buffer.from(frame, 'utf8');
      const split = Math.min(bytes.length - 1, 7);
      res.write(bytes.subarray(0, split));
      await tick();
      res.write(bytes.subarray(split));
      await tick();
    }
    if (reply.cutAfter !== undefined) {
      cutByFake = true;
      res.socket?.destroy();
      return;
    }
    if (reply.stallAfter !== undefined) return; // open and silent until the client leaves
    res.end();
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const accepted = () => requests.filter((request) => !request.rejected);
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    reply: (...replies) => {
      queue.push(...replies);
    },
    answerWith: (script) => {
      decide = script;
    },
    accepted,
    last() {
      const last = accepted().at(-1);
      if (!last) {
        const reasons = requests.map((request) => `${request.path}: ${request.rejected?.status} ${request.rejected?.message}`);
        throw new Error(`the fake upstream accepted no request${reasons.length ? `; rejected: ${reasons.join('; ')}` : ''}`);
      }
      return last;
    },
    get peakConcurrency() {
      return probe.peak;
    },
    holdUntilQuiet: (on) => probe.hold(on),
    reset() {
      requests.length = 0;
      queue = [];
      probe.reset();
    },
    close: () => closeServer(server),
  };
}

/** Closes a fake's server and every connection still open on it. */
export function closeServer(server: Server): Promise<void> {
  return new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
}

/** Resolves true after `ms`, or false as soon as the client closed the connection (no timer left behind). */
function waitUnlessClosed(res: ServerResponse, ms: number): Promise<boolean> {
  if (res.destroyed) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onClose = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      res.off('close', onClose);
      resolve(true);
    }, ms);
    res.once('close', onClose);
  });
}

function send(res: ServerResponse, rendered: Rendered): void {
  const payload = JSON.stringify(rendered.json ?? null);
  res.writeHead(rendered.status, { 'content-type': 'application/json', ...rendered.headers });
  res.end(payload);
}

/** A recorded body: SSE text split into its frames, or a JSON document. */
function replayed(raw: string, streaming: boolean): Rendered {
  if (!streaming) return { status: 200, headers: { 'content-type': 'application/json' }, json: JSON.parse(raw) };
  const frames = raw
    .replace(/\r\n/g, '\n')
    .split(/\n\n+/)
    .filter((frame) => frame.trim() !== '')
    .map((frame) => frame + '\n\n');
  return { status: 200, headers: { 'content-type': 'text/event-stream; charset=utf-8' }, frames };
}

/** A recorded upstream stream: the captures the stream decoders are tested on, replayed over HTTP. */
export function recorded(name: string): string {
  return readFileSync(new URL(`../protocols/upstream/fixtures/${name}`, import.meta.url), 'utf8');
}

/** Ids that count up per fake (`req_fake_0001`, …), for request ids, message ids and tool ids. */
export function counter(prefix: string): () => string {
  let n = 0;
  return () => `${prefix}${(++n).toString().padStart(4, '0')}`;
}

export function sseData(json: unknown): string {
  return `data: ${JSON.stringify(json)}\n\n`;
}

export function sseEvent(type: string, json: unknown): string {
  return `event: ${type}\ndata: ${JSON.stringify(json)}\n\n`;
}

export function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
