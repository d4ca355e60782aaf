// Upstream faults the mock injects on request. A client puts `FAULT:<kind>` anywhere in its body
// (in the prompt, which the gateway carries into every upstream protocol it translates to), so
// the soak knows which requests met a fault and can tell an expected error from a gateway bug.
//   429 — rate limited (with `retry-after`), 500 — server error, cut — the answer's connection is
//   destroyed halfway through its body (a stream after some events, a JSON body half sent).

/** @typedef {'429' | '500' | 'cut'} FaultKind */

/** @type {readonly FaultKind[]} */
export const FAULT_KINDS = ['429', '500', 'cut'];

/** The marker a client writes into a request body to ask for a fault. @param {FaultKind} kind */
export const faultMarker = (kind) => `FAULT:${kind}`;

/**
 * Finds fixed byte strings in a body read in chunks, also when one spans two chunks.
 * @template {string} K
 */
export class BodyScanner {
  /** @param {Record<K, string>} needles */
  constructor(needles) {
    /** @type {[K, Buffer][]} */
    this.needles = /** @type {[K, string][]} */ (Object.entries(needles)).map(([name, text]) => [name, Buffer.from(text)]);
    this.longest = Math.max(...this.needles.map(([, bytes]) => bytes.length));
    /** @type {Set<K>} */
    this.found = new Set();
    /** @type {Buffer | undefined} */
    this.tail = undefined;
  }

  /** @param {Buffer} chunk */
  push(chunk) {
    if (this.found.size === this.needles.length) return;
    const joint = this.tail ? Buffer.concat([this.tail, chunk.subarray(0, this.longest - 1)]) : undefined;
    for (const [name, bytes] of this.needles) {
      if (!this.found.has(name) && (chunk.includes(bytes) || joint?.includes(bytes))) this.found.add(name);
    }
    this.tail = chunk.subarray(Math.max(0, chunk.length - (this.longest - 1)));
  }
}

/** The needles of the fault markers, for a `BodyScanner`. */
export const faultNeedles = /** @type {Record<FaultKind, string>} */ (Object.fromEntries(FAULT_KINDS.map((kind) => [kind, faultMarker(kind)])));

/**
 * Answers an error status in the upstream's own error shape.
 * @param {import('node:http').ServerResponse} res @param {429 | 500} status @param {boolean} anthropic
 */
export function answerErrorStatus(res, status, anthropic) {
  const type = status === 429 ? (anthropic ? 'rate_limit_error' : 'rate_limit_exceeded') : anthropic ? 'api_error' : 'server_error';
  const message = `injected upstream fault (${status})`;
  const body = Buffer.from(JSON.stringify(anthropic ? { type: 'error', error: { type, message } } : { error: { message, type, param: null, code: null } }));
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': body.length, ...(status === 429 ? { 'retry-after': '1' } : {}) });
  res.end(body);
}

/**
 * Makes whatever the handler answers next stop halfway: once half the declared `content-length`
 * is written, the connection is destroyed (after those bytes are flushed).
 * @param {import('node:http').ServerResponse} res
 */
export function cutHalfway(res) {
  let limit = Infinity;
  let sent = 0;
  const writeHead = res.writeHead.bind(res);
  const write = res.write.bind(res);
  res.writeHead = /** @type {any} */ (
    (/** @type {number} */ status, /** @type {Record<string, any>} */ headers) => {
      limit = Math.floor(Number(headers?.['content-length'] ?? 0) / 2);
      return writeHead(status, headers);
    }
  );
  /** @param {Buffer} chunk */
  const take = (chunk) => {
    if (sent >= limit) return false;
    const room = limit - sent;
    if (chunk.length < room) {
      sent += chunk.length;
      return write(chunk);
    }
    sent = limit;
    write(chunk.subarray(0, room), () => res.destroy());
    return false;
  };
  res.write = /** @type {any} */ ((/** @type {Buffer} */ chunk) => take(chunk));
  res.end = /** @type {any} */ (
    (/** @type {Buffer | undefined} */ chunk) => {
      if (chunk) take(chunk);
      return res;
    }
  );
}
