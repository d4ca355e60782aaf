// Load generation over the raw keep-alive client: closed loops (N requests in flight), an open loop
// (a fixed rate, latency counted from each request's scheduled send time, so a stall is not hidden
// by the generator waiting for it), and SSE streams timed frame by frame.
import { Connection } from './http-client.mjs';

const now = () => performance.now();
const LFLF = Buffer.from('\n\n');

/** How long one request may take before it is counted as an error and its connection dropped. */
export const REQUEST_TIMEOUT_MS = 30_000;
/** The message of the error such a request ends with. */
export const TIMED_OUT = 'request timed out';

/**
 * @typedef {object} Exchange
 * @property {number} status
 * @property {number} bytes
 * @property {string} [body]  kept only when asked
 * @property {Error} [error]
 */

/**
 * Sends one request on a connection and waits for the whole answer.
 * @param {Connection} conn
 * @param {Buffer} bytes
 * @param {{ keepBody?: boolean, onBody?: (chunk: Buffer) => void, onHead?: (status: number, headers: Record<string, string>) => void }} [options]
 * @returns {Promise<Exchange>}
 */
export function exchange(conn, bytes, options = {}) {
  return new Promise((resolve) => {
    /** @type {Buffer[]} */
    const parts = [];
    let size = 0;
    let settled = false;
    const timer = setTimeout(() => conn.fail(new Error(TIMED_OUT)), REQUEST_TIMEOUT_MS);
    /** @param {Exchange} result */
    const settle = (result) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
    };
    void conn.send(bytes, {
      ...(options.onHead ? { onHead: (/** @type {number} */ status, /** @type {Record<string, string>} */ headers) => options.onHead?.(status, headers) } : {}),
      onBody(chunk) {
        size += chunk.length;
        if (options.keepBody && size < 4 * 1024 * 1024) parts.push(Buffer.from(chunk));
        options.onBody?.(chunk);
      },
      onEnd(status) {
        settle({ status, bytes: size, ...(options.keepBody ? { body: Buffer.concat(parts).toString('utf8') } : {}) });
      },
      onError(error) {
        settle({ status: 0, bytes: size, error });
      },
    });
  });
}

/**
 * N connections, each sending its next request as soon as the last one is answered, for a time.
 * @param {{ port: number, request: Buffer, concurrency: number, durationMs: number, keepSample?: boolean }} options
 */
export async function closedLoop({ port, request, concurrency, durationMs, keepSample = false }) {
  const conns = Array.from({ length: concurrency }, () => new Connection(port));
  /** @type {number[]} */
  const latencies = [];
  let errors = 0;
  let non2xx = 0;
  /** @type {string | undefined} */
  let sample;
  /** @type {string | undefined} */
  let firstError;
  const started = now();
  const deadline = started + durationMs;
  await Promise.all(
    conns.map(async (conn, index) => {
      let first = true;
      while (now() < deadline) {
        const t0 = now();
        const keepBody = keepSample && index === 0 && first;
        const result = await exchange(conn, request, { keepBody });
        first = false;
        if (result.error) {
          errors++;
          firstError ??= result.error.message;
          continue;
        }
        if (result.status < 200 || result.status >= 300) {
          non2xx++;
          firstError ??= `HTTP ${result.status}`;
        } else latencies.push(now() - t0);
        if (keepBody) sample = result.body;
      }
    }),
  );
  const elapsedMs = now() - started;
  for (const conn of conns) conn.close();
  return { requests: latencies.length, errors, non2xx, firstError, latencies, elapsedMs, rps: (latencies.length * 1000) / elapsedMs, sample };
}

/**
 * A fixed request rate, whatever the server's speed: latency runs from the scheduled send time.
 * @param {{ port: number, request: Buffer, rate: number, durationMs: number, maxConnections?: number }} options
 */
export async function openLoop({ port, request, rate, durationMs, maxConnections = 512 }) {
  /** @type {Connection[]} */
  const idle = [];
  /** @type {Connection[]} */
  const all = [];
  /** @type {number[]} */
  const backlog = [];
  /** @type {number[]} */
  const latencies = [];
  let errors = 0;
  let outstanding = 0;
  const total = Math.max(1, Math.round((rate * durationMs) / 1000));
  const started = now();
  let sent = 0;
  /** @type {() => void} */
  let allDone = () => {};
  const done = new Promise((resolve) => (allDone = () => resolve(undefined)));

  /** @param {Connection} conn @param {number} scheduled */
  const run = async (conn, scheduled) => {
    outstanding++;
    const result = await exchange(conn, request);
    outstanding--;
    if (result.error || result.status < 200 || result.status >= 300) errors++;
    else latencies.push(now() - scheduled);
    const queued = backlog.shift();
    if (queued !== undefined) void run(conn, queued);
    else idle.push(conn);
    if (sent >= total && outstanding === 0 && backlog.length === 0) allDone();
  };
  /** @param {number} scheduled */
  const dispatch = (scheduled) => {
    let conn = idle.pop();
    if (!conn && all.length < maxConnections) {
      conn = new Connection(port);
      all.push(conn);
    }
    if (conn) void run(conn, scheduled);
    else backlog.push(scheduled);
  };
  await new Promise((resolve) => {
    const tick = () => {
      const t = now();
      while (sent < total && started + (sent * 1000) / rate <= t) dispatch(started + (sent++ * 1000) / rate);
      if (sent < total) setTimeout(tick, 1);
      else resolve(undefined);
    };
    tick();
  });
  if (outstanding > 0 || backlog.length > 0) await Promise.race([done, new Promise((r) => setTimeout(r, REQUEST_TIMEOUT_MS))]);
  const elapsedMs = now() - started;
  for (const conn of all) conn.close();
  return { requests: latencies.length, errors, latencies, elapsedMs, connections: all.length };
}

/**
 * Follows one SSE answer: counts frames (blank-line terminated), times the first one and the
 * gaps between reads that complete frames, and keeps the last bytes to find the terminal event.
 */
export class StreamTracker {
  /** @param {number} sentAt @param {string} [terminal] marker of the end of a complete stream */
  constructor(sentAt, terminal) {
    this.sentAt = sentAt;
    this.terminal = terminal ? Buffer.from(terminal) : undefined;
    this.terminalSeen = false;
    this.frames = 0;
    this.firstFrameAt = NaN;
    this.lastFrameAt = NaN;
    this.maxGap = 0;
    this.endedWithLF = false;
    this.tail = '';
    /** @type {number[] | undefined} */
    this.gaps = undefined;
  }

  /** @param {Buffer} chunk */
  onBody(chunk) {
    let count = 0;
    if (this.endedWithLF && chunk[0] === 10) count++;
    let at = chunk.indexOf(LFLF);
    while (at >= 0) {
      count++;
      at = chunk.indexOf(LFLF, at + 2);
    }
    this.endedWithLF = chunk[chunk.length - 1] === 10;
    if (this.terminal && !this.terminalSeen) {
      const m = this.terminal.length;
      const joint = this.tail ? Buffer.concat([Buffer.from(this.tail.slice(-(m - 1)), 'latin1'), chunk.subarray(0, m - 1)]) : undefined;
      this.terminalSeen = chunk.includes(this.terminal) || joint?.includes(this.terminal) === true;
    }
    this.tail = (this.tail + chunk.toString('latin1', Math.max(0, chunk.length - 256))).slice(-256);
    if (count === 0) return;
    const t = now();
    if (this.frames === 0) this.firstFrameAt = t;
    else {
      const gap = t - this.lastFrameAt;
      if (gap > this.maxGap) this.maxGap = gap;
      this.gaps?.push(gap);
    }
    this.lastFrameAt = t;
    this.frames += count;
  }

  get ttfc() {
    return this.firstFrameAt - this.sentAt;
  }
}

/**
 * @typedef {object} StreamCheck
 * @property {string} terminal      marker of a complete stream (e.g. `data: [DONE]`)
 * @property {number} [expectedFrames]  frames of a complete stream, from a calibration stream
 */

/**
 * Whether a finished stream lost something: an error, a non-2xx, no terminal event, or fewer frames.
 * @param {Exchange} result @param {StreamTracker} tracker @param {StreamCheck} check
 */
export function streamLost(result, tracker, check) {
  if (result.error || result.status < 200 || result.status >= 300) return true;
  if (!tracker.terminalSeen && !tracker.tail.includes(check.terminal)) return true;
  return check.expectedFrames !== undefined && tracker.frames < check.expectedFrames;
}

/**
 * N connections, each opening its next stream when the last one ends, for a time.
 * @param {{ port: number, request: Buffer, concurrency: number, durationMs: number, check: StreamCheck, keepSample?: boolean, keepGaps?: boolean }} options
 */
export async function streamLoop({ port, request, concurrency, durationMs, check, keepSample = false, keepGaps = true }) {
  const conns = Array.from({ length: concurrency }, () => new Connection(port));
  /** @type {number[]} */
  const ttfc = [];
  /** @type {number[]} */
  const gaps = [];
  let streams = 0;
  let lost = 0;
  let frames = 0;
  /** @type {string | undefined} */
  let sample;
  /** @type {string | undefined} */
  let firstError;
  const started = now();
  const deadline = started + durationMs;
  await Promise.all(
    conns.map(async (conn, index) => {
      let first = true;
      while (now() < deadline) {
        const tracker = new StreamTracker(now(), check.terminal);
        if (keepGaps) tracker.gaps = gaps;
        const keepBody = keepSample && index === 0 && first;
        const result = await exchange(conn, request, { keepBody, onBody: (chunk) => tracker.onBody(chunk) });
        first = false;
        streams++;
        frames += tracker.frames;
        if (keepBody) sample = result.body;
        if (streamLost(result, tracker, check)) {
          lost++;
          firstError ??= result.error?.message ?? `HTTP ${result.status}, ${tracker.frames} frames`;
        } else ttfc.push(tracker.ttfc);
      }
    }),
  );
  const elapsedMs = now() - started;
  for (const conn of conns) conn.close();
  return { streams, lost, frames, ttfc, gaps, elapsedMs, firstError, sample, framesPerSec: (frames * 1000) / elapsedMs };
}

/**
 * Opens `count` streams (one connection each), their starts spread over `rampMs`, and waits for all
 * to end. `during` runs once every stream has started (e.g. to sample memory or send other requests).
 * @param {{ port: number, request: Buffer, count: number, rampMs: number, check: StreamCheck, during?: () => Promise<unknown> }} options
 */
export async function holdStreams({ port, request, count, rampMs, check, during }) {
  /** @type {number[]} */
  const gaps = [];
  let lost = 0;
  let frames = 0;
  let maxGap = 0;
  /** @type {string | undefined} */
  let firstError;
  /** @type {Connection[]} */
  const conns = [];
  /** @type {Promise<void>[]} */
  const running = [];
  const started = now();
  for (let i = 0; i < count; i++) {
    const due = started + (rampMs * i) / count;
    const wait = due - now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    const conn = new Connection(port);
    conns.push(conn);
    running.push(
      (async () => {
        const tracker = new StreamTracker(now(), check.terminal);
        tracker.gaps = gaps;
        const result = await exchange(conn, request, { onBody: (chunk) => tracker.onBody(chunk) });
        frames += tracker.frames;
        if (tracker.maxGap > maxGap) maxGap = tracker.maxGap;
        if (streamLost(result, tracker, check)) {
          lost++;
          firstError ??= result.error?.message ?? `HTTP ${result.status}, ${tracker.frames} frames`;
        }
        conn.close();
      })(),
    );
  }
  const duringResult = during ? await during() : undefined;
  await Promise.all(running);
  for (const conn of conns) conn.close();
  return { count, lost, frames, gaps, maxGap, firstError, elapsedMs: now() - started, during: duringResult };
}
