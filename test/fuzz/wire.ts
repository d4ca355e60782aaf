import { connect } from 'node:net';

const WRITE_CHUNK = 64 * 1024;

/** One request as bytes on the wire: nothing is normalized, so malformed heads reach the server as written. */
export interface WireRequest {
  method: string;
  /** Request target as sent: path and query, not encoded or checked. */
  target: string;
  /** In order; a name may repeat. */
  headers: readonly (readonly [string, string])[];
  body: Uint8Array;
  /**
   * Close our sending side after the body (a client that gave up mid-upload, e.g. after declaring a
   * longer `content-length` than it sent). The response is still read.
   */
  halfClose?: boolean;
}

export interface WireResponse {
  status: number;
  /** Lower-cased names; a repeated header's values joined with `, `. */
  headers: Record<string, string>;
  /** The body, de-chunked. */
  body: Buffer;
}

/** What came back: a response, the connection closed or reset before one, or nothing within the deadline. */
export type WireOutcome =
  | { kind: 'response'; response: WireResponse; elapsedMs: number }
  | { kind: 'closed'; detail: string; elapsedMs: number }
  | { kind: 'timeout'; detail: string; elapsedMs: number };

/**
 * Sends `request` on a fresh keep-alive connection to `origin` (`http://127.0.0.1:port`) and reads
 * one complete response: by `content-length`, to the last chunk of a chunked body (an SSE stream
 * is read to its end), or to the close of a connection that sends neither. Keep-alive rather than
 * `connection: close` because a server that closes right after answering an upload it did not
 * read lets the kernel reset the socket and drop the answer; here the server drains instead.
 */
export function sendRaw(origin: string, request: WireRequest, deadlineMs: number): Promise<WireOutcome> {
  const { hostname, port } = new URL(origin);
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  return new Promise<WireOutcome>((resolve) => {
    const socket = connect({ host: hostname, port: Number(port) });
    const reader = new ResponseReader(request.method === 'HEAD');
    let settled = false;
    const settle = (outcome: WireOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(outcome);
    };
    const timer = setTimeout(() => {
      settle({ kind: 'timeout', detail: `no complete response within ${deadlineMs} ms (${reader.describe()})`, elapsedMs: elapsed() });
    }, deadlineMs);

    socket.on('connect', () => {
      socket.write(headOf(request));
      void writeBody();
    });
    /**
     * The body goes out in pieces, and stops once an answer has begun, as curl does: a server that
     * answers early (413 on the declared length) closes the connection, and writing on would end
     * in EPIPE, which makes Node drop the answer that had already arrived.
     */
    const writeBody = async () => {
      for (let at = 0; at < request.body.byteLength; at += WRITE_CHUNK) {
        if (settled || reader.answered) return;
        if (!socket.write(request.body.subarray(at, at + WRITE_CHUNK))) {
          await new Promise<void>((resolve) => {
            socket.once('drain', resolve);
            socket.once('close', resolve);
          });
        }
        // Let an early answer be read before the next piece goes out.
        await new Promise((resolve) => setImmediate(resolve));
      }
      if (request.halfClose && !settled) socket.end();
    };
    socket.on('data', (chunk: Buffer) => {
      try {
        const response = reader.push(chunk);
        if (response) settle({ kind: 'response', response, elapsedMs: elapsed() });
      } catch (error) {
        settle({ kind: 'closed', detail: `unparsable response: ${(error as Error).message}`, elapsedMs: elapsed() });
      }
    });
    // A server that rejects early may reset while we still write; what it answered first counts.
    socket.on('error', (error) => {
      const response = reader.atClose();
      settle(response ? { kind: 'response', response, elapsedMs: elapsed() } : { kind: 'closed', detail: error.message, elapsedMs: elapsed() });
    });
    socket.on('close', () => {
      const response = reader.atClose();
      settle(
        response ? { kind: 'response', response, elapsedMs: elapsed() } : { kind: 'closed', detail: `closed after ${reader.describe()}`, elapsedMs: elapsed() },
      );
    });
  });
}

/** The request line and headers; latin1, so header values go out byte for byte as a raw client's would. */
function headOf(request: WireRequest): Buffer {
  const lines = request.headers.map(([name, value]) => `${name}: ${value}\r\n`).join('');
  return Buffer.from(`${request.method} ${request.target} HTTP/1.1\r\n${lines}\r\n`, 'latin1');
}

/** Size of the request head in bytes (Node refuses heads over 16 KiB with a 431). */
export function headBytes(request: WireRequest): number {
  return headOf(request).byteLength;
}

/** An incremental HTTP/1.1 response parser, just enough for one response per connection. */
class ResponseReader {
  private buffer = Buffer.alloc(0);
  private head: { status: number; headers: Record<string, string>; bodyStart: number } | undefined;

  constructor(private readonly headRequest: boolean) {}

  /** Whether a final response's head has arrived. */
  get answered(): boolean {
    return this.head !== undefined;
  }

  /** Adds bytes; returns the response once it is complete. */
  push(chunk: Buffer): WireResponse | undefined {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    for (;;) {
      if (!this.head) {
        const end = this.buffer.indexOf('\r\n\r\n');
        if (end === -1) return undefined;
        const head = parseHead(this.buffer.subarray(0, end).toString('latin1'));
        // Interim responses (100 Continue) precede the real one.
        if (head.status >= 100 && head.status < 200) {
          this.buffer = this.buffer.subarray(end + 4);
          continue;
        }
        this.head = { ...head, bodyStart: end + 4 };
      }
      return this.complete();
    }
  }

  /** At the connection's close: the response if its head arrived (a body without length ends here). */
  atClose(): WireResponse | undefined {
    if (!this.head) return undefined;
    return this.complete() ?? { status: this.head.status, headers: this.head.headers, body: this.buffer.subarray(this.head.bodyStart) };
  }

  describe(): string {
    if (!this.head) return `${this.buffer.byteLength} bytes, no response head`;
    return `status ${this.head.status}, ${this.buffer.byteLength - this.head.bodyStart} body bytes so far`;
  }

  private complete(): WireResponse | undefined {
    const { status, headers, bodyStart } = this.head!;
    const raw = this.buffer.subarray(bodyStart);
    if (this.headRequest || status === 204 || status === 304) return { status, headers, body: Buffer.alloc(0) };
    if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
      const body = dechunk(raw);
      return body ? { status, headers, body } : undefined;
    }
    const length = headers['content-length'];
    if (length !== undefined) {
      const size = Number(length);
      return raw.byteLength >= size ? { status, headers, body: raw.subarray(0, size) } : undefined;
    }
    return undefined; // read to close
  }
}

function parseHead(text: string): { status: number; headers: Record<string, string> } {
  const [statusLine = '', ...lines] = text.split('\r\n');
  const match = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine);
  if (!match) throw new Error(`bad status line ${JSON.stringify(statusLine.slice(0, 80))}`);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon === -1) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  return { status: Number(match[1]), headers };
}

/** The de-chunked body once the last chunk has arrived, else undefined. */
function dechunk(raw: Buffer): Buffer | undefined {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = raw.indexOf('\r\n', at);
    if (lineEnd === -1) return undefined;
    const size = Number.parseInt(raw.subarray(at, lineEnd).toString('latin1').split(';')[0]!, 16);
    if (!Number.isFinite(size)) throw new Error('bad chunk size');
    const dataStart = lineEnd + 2;
    if (size === 0) {
      // Trailers (none expected) end with an empty line.
      return raw.indexOf('\r\n', dataStart) === -1 ? undefined : Buffer.concat(parts);
    }
    if (raw.byteLength < dataStart + size + 2) return undefined;
    parts.push(raw.subarray(dataStart, dataStart + size));
    at = dataStart + size + 2;
  }
}
