import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';

type Json = Record<string, any>;

/** What a raw upstream received: one request per connection (it always answers `connection: close`). */
export interface RawRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  /** The parsed JSON body (undefined when it was not JSON). */
  body: any;
  /** `performance.now()` when the connection closed, whoever closed it. */
  closedAt?: number;
  /** Resolves when the connection is closed. */
  closed: Promise<void>;
  /** The connection closed before the script was done with it (the gateway hung up). */
  closedByPeer: boolean;
}

/**
 * One exchange on a raw connection: the script writes exactly the bytes it wants, in the
 * framing it wants, and can cut the connection at any point.
 */
export class RawExchange {
  private done = false;

  constructor(
    readonly socket: Socket,
    readonly request: RawRequest,
  ) {}

  /** True once the connection is gone (the peer hung up or the script cut it). */
  get gone(): boolean {
    return this.socket.destroyed || this.request.closedAt !== undefined;
  }

  /** The status line and headers; adds `connection: close` so each connection serves one request. */
  head(status: number, headers: Record<string, string>): void {
    const lines = [`HTTP/1.1 ${status} ${status < 300 ? 'OK' : 'Error'}`];
    for (const [name, value] of Object.entries({ ...headers, connection: 'close' })) lines.push(`${name}: ${value}`);
    this.socket.write(lines.join('\r\n') + '\r\n\r\n');
  }

  /** A whole JSON answer with its content-length. */
  json(status: number, body: unknown, headers: Record<string, string> = {}): void {
    const payload = Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
    this.head(status, { 'content-type': 'application/json', 'content-length': String(payload.length), ...headers });
    this.socket.end(payload);
    this.done = true;
  }

  /** Starts a chunked SSE answer. */
  sseHead(headers: Record<string, string> = {}): void {
    this.head(200, { 'content-type': 'text/event-stream; charset=utf-8', 'transfer-encoding': 'chunked', ...headers });
  }

  /** Starts a chunked answer of another type. */
  chunkedHead(status: number, contentType: string): void {
    this.head(status, { 'content-type': contentType, 'transfer-encoding': 'chunked' });
  }

  /** One HTTP chunk; false when the socket buffer is full (see `drained`). */
  chunk(data: string | Uint8Array): boolean {
    const bytes = typeof data === 'string' ? Buffer.from(data) : data;
    if (bytes.length === 0 || this.gone) return !this.gone;
    return this.socket.write(Buffer.concat([Buffer.from(`${bytes.length.toString(16)}\r\n`), bytes, Buffer.from('\r\n')]));
  }

  /** Bytes as they are, no framing. */
  raw(data: string | Uint8Array): boolean {
    return this.gone ? false : this.socket.write(data);
  }

  /** The last chunk: a well-formed end of the body, then the connection closes. */
  endChunked(): void {
    if (!this.gone) this.socket.end('0\r\n\r\n');
    this.done = true;
  }

  /** A clean TCP close (FIN) without ending the HTTP framing. */
  end(): void {
    if (!this.gone) this.socket.end();
    this.done = true;
  }

  /** A TCP reset: the peer sees ECONNRESET. */
  reset(): void {
    this.done = true;
    if (!this.socket.destroyed) this.socket.resetAndDestroy();
  }

  /** Resolves when the socket can take more, or with false when it closed or `ms` passed first. */
  drained(ms: number): Promise<boolean> {
    if (this.gone) return Promise.resolve(false);
    return new Promise((resolve) => {
      const finish = (value: boolean) => {
        clearTimeout(timer);
        this.socket.off('drain', onDrain);
        this.socket.off('close', onClose);
        resolve(value);
      };
      const onDrain = () => finish(true);
      const onClose = () => finish(false);
      const timer = setTimeout(() => finish(false), ms);
      this.socket.on('drain', onDrain);
      this.socket.on('close', onClose);
    });
  }

  /** Marks the script as done, so a later close is not counted as the peer's. */
  finished(): void {
    this.done = true;
  }

  /** @internal */
  get scriptDone(): boolean {
    return this.done;
  }
}

export type RawScript = (exchange: RawExchange) => void | Promise<void>;

export interface RawUpstream {
  url: string;
  port: number;
  /** Every request received, in order. */
  readonly requests: RawRequest[];
  /** How each request is answered; replaceable per test. Default: 500 with a JSON error. */
  script: RawScript;
  /** Connections currently open. */
  openSockets(): number;
  /** The open connections, with what each received (for a test to show what was left open). */
  describeOpen(): { remotePort: number | undefined; received: string }[];
  reset(): void;
  close(): Promise<void>;
}

/**
 * A misbehaving upstream on loopback over `node:net`: it parses just enough HTTP/1.1 to read one
 * request (headers and a content-length body) and then runs a script that writes exactly the bytes
 * a test wants: broken framing, resets, silence, trickles, invalid SSE, huge bodies.
 */
export async function startRawUpstream(): Promise<RawUpstream> {
  const requests: RawRequest[] = [];
  const sockets = new Set<Socket>();
  const received = new WeakMap<Socket, string>();
  const upstream: RawUpstream = {
    url: '',
    port: 0,
    requests,
    script: (exchange) => exchange.json(500, { error: { message: 'no script', type: 'server_error' } }),
    openSockets: () => sockets.size,
    describeOpen: () => [...sockets].map((socket) => ({ remotePort: socket.remotePort, received: received.get(socket) ?? '' })),
    reset() {
      requests.length = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };

  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.setNoDelay(true);
    let buffered = Buffer.alloc(0);
    let exchange: RawExchange | undefined;
    let resolveClosed!: () => void;
    const closed = new Promise<void>((resolve) => (resolveClosed = resolve));
    // The first sign of a close: a FIN ('end') or a reset or local destroy ('close').
    const sawClose = () => {
      if (exchange && exchange.request.closedAt === undefined) {
        exchange.request.closedAt = performance.now();
        if (!exchange.scriptDone) exchange.request.closedByPeer = true;
      }
    };
    socket.on('error', () => {});
    socket.on('end', sawClose);
    socket.on('close', () => {
      sockets.delete(socket);
      sawClose();
      resolveClosed();
    });
    socket.on('data', (data: Buffer) => {
      received.set(socket, ((received.get(socket) ?? '') + data.toString('latin1')).slice(0, 300));
      if (exchange) return; // one request per connection; anything after it is ignored
      buffered = Buffer.concat([buffered, data]);
      const end = buffered.indexOf('\r\n\r\n');
      if (end < 0) return;
      const [line = '', ...fields] = buffered.subarray(0, end).toString('latin1').split('\r\n');
      const headers: Record<string, string> = {};
      for (const field of fields) {
        const colon = field.indexOf(':');
        if (colon > 0) headers[field.slice(0, colon).trim().toLowerCase()] = field.slice(colon + 1).trim();
      }
      const length = Number(headers['content-length'] ?? 0);
      if (buffered.length < end + 4 + length) return;
      const text = buffered.subarray(end + 4, end + 4 + length).toString('utf8');
      const [method = '', url = ''] = line.split(' ');
      let body: Json | undefined;
      try {
        body = text === '' ? undefined : JSON.parse(text);
      } catch {
        body = undefined;
      }
      const request: RawRequest = { method, path: url.split('?')[0]!, headers, body, closed, closedByPeer: false };
      requests.push(request);
      exchange = new RawExchange(socket, request);
      const current = exchange;
      void Promise.resolve()
        .then(() => upstream.script(current))
        .catch((error: unknown) => {
          if (!current.gone) current.json(500, { error: { message: `raw upstream script failed: ${String(error)}` } });
        });
    });
  });
  // A deep accept queue: bursts of connections (a thousand aborted streams) are not dropped and retried.
  await new Promise<void>((resolve) => server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, resolve));
  const { port } = server.address() as AddressInfo;
  upstream.port = port;
  upstream.url = `http://127.0.0.1:${port}`;
  return upstream;
}
