// How the soak judges one request: fine, a deliberate client abort, the expected face of an
// injected upstream fault, or unexpected — a 5xx no fault explains, a stream that ended as if
// complete although its upstream was cut, a client-side exception, a wrong answer.
import { CLOSED_MID_RESPONSE } from './http-client.mjs';
import { REQUEST_TIMEOUT_MS, TIMED_OUT } from './load.mjs';
import { CLIENT_ABORT } from './soak-mix.mjs';

/** @typedef {'ok' | 'aborted' | 'expected' | 'unexpected'} Outcome */

/** An error event: Chat `data: {"error":…}`, Messages `event: error`, Responses `response.failed` or `error`. */
const ERROR_EVENT = /^(event: (error|response\.failed)|data: \{"error")/m;

/** The last complete frame of an SSE tail. @param {string} tail */
function lastFrame(tail) {
  const frames = tail.split(/\r?\n\r?\n/).filter((frame) => frame.trim() !== '');
  return frames[frames.length - 1] ?? '';
}

/**
 * @param {import('./soak-mix.mjs').Observation} obs
 * @returns {{ outcome: Outcome, kind: string }}
 */
export function classify(obs) {
  const { fault, status, error } = obs;
  const is2xx = status >= 200 && status < 300;
  if (obs.abort && error?.message === CLIENT_ABORT)
    return { outcome: 'aborted', kind: obs.shape === 'upload-abort' ? 'client left mid-upload' : 'client left mid-stream' };
  // A gateway that never ends an answer is a failure whatever the upstream did.
  if (error?.message === TIMED_OUT) {
    return {
      outcome: 'unexpected',
      kind: `answer never ended (client gave up after ${REQUEST_TIMEOUT_MS / 1000} s)${fault ? ` after upstream ${fault}` : ''}`,
    };
  }

  if (fault === '429' || fault === '500') {
    if (status === Number(fault)) return { outcome: 'expected', kind: `upstream ${fault} → ${status}` };
    return { outcome: 'unexpected', kind: `upstream ${fault} answered ${error ? `with a client exception (${error.message})` : `HTTP ${status}`}` };
  }

  if (fault === 'cut') {
    if (status >= 500) return { outcome: 'expected', kind: `upstream cut → ${status}` };
    if (error?.message === CLOSED_MID_RESPONSE) return { outcome: 'expected', kind: 'upstream cut → client connection closed mid-answer' };
    if (error) return { outcome: 'unexpected', kind: `upstream cut → client exception: ${error.message}` };
    if (is2xx && obs.shape === 'sse' && !obs.terminalSeen) {
      return ERROR_EVENT.test(lastFrame(obs.tail ?? ''))
        ? { outcome: 'expected', kind: 'upstream cut → error event in the stream' }
        : { outcome: 'unexpected', kind: 'upstream cut → stream ended without an error event' };
    }
    if (is2xx) return { outcome: 'unexpected', kind: `upstream cut → ${obs.shape} answer ended cleanly` };
    return { outcome: 'unexpected', kind: `upstream cut answered HTTP ${status}` };
  }

  if (error) return { outcome: 'unexpected', kind: `client exception: ${error.message}` };
  if (status >= 500) return { outcome: 'unexpected', kind: `HTTP ${status} without an upstream fault` };
  if (!is2xx) return { outcome: 'unexpected', kind: `HTTP ${status}` };
  if (obs.problem) return { outcome: 'unexpected', kind: obs.shape === 'sse' ? 'stream ended without its terminal event' : 'wrong answer' };
  return { outcome: 'ok', kind: 'ok' };
}

/** Counts of requests by route and outcome, and of errors by kind (with a first example each). */
export class Tally {
  constructor() {
    /** @type {Map<string, { requests: number, ok: number, aborted: number, expected: number, unexpected: number, latencies: number[] }>} */
    this.routes = new Map();
    /** @type {Map<string, { outcome: Outcome, count: number, example: string }>} */
    this.kinds = new Map();
    this.total = { requests: 0, ok: 0, aborted: 0, expected: 0, unexpected: 0 };
  }

  /** @param {import('./soak-mix.mjs').Observation} obs */
  add(obs) {
    const { outcome, kind } = classify(obs);
    let route = this.routes.get(obs.route);
    if (!route) this.routes.set(obs.route, (route = { requests: 0, ok: 0, aborted: 0, expected: 0, unexpected: 0, latencies: [] }));
    route.requests++;
    route[outcome]++;
    if (outcome === 'ok') route.latencies.push(obs.latencyMs);
    this.total.requests++;
    this.total[outcome]++;
    if (outcome === 'ok') return outcome;
    let entry = this.kinds.get(kind);
    if (!entry) {
      const detail = [obs.problem, obs.tail && outcome === 'unexpected' ? `tail: ${JSON.stringify(obs.tail.slice(-160))}` : undefined]
        .filter(Boolean)
        .join('; ');
      this.kinds.set(kind, (entry = { outcome, count: 0, example: `${obs.route}${obs.fault ? ` (fault ${obs.fault})` : ''}${detail ? `: ${detail}` : ''}` }));
    }
    entry.count++;
    return outcome;
  }
}
