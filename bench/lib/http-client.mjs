// A minimal HTTP/1.1 keep-alive client over one TCP socket, written for the benchmark: requests are
// pre-serialized bytes, one request in flight per connection, and the response is parsed just enough
// (status, content-length or chunked) to hand body bytes to the caller as they arrive. It costs far
// less CPU per request than a general client, so the load generator is not what gets measured.
import net from 'node:net';

const CRLFCRLF = Buffer.from('\r\n\r\n');
const CRLF = Buffer.from('\r\n');
/** The message of the error a response ends with when the server closes the connection inside it. */
export const CLOSED_MID_RESPONSE = 'connection closed mid-response';

/**
 * @typedef {object} ResponseHandler
 * @property {(status: number, headers: Record<string, string>) => void} [onHead]
 * @property {(chunk: Buffer) => void} [onBody]
 * @property {(status: number) => void} onEnd
 * @property {(error: Error) => void} onError
 */

/**
 * Builds the bytes of one request (a POST unless told; a GET goes without a body).
 * @param {string} path
 * @param {Record<string, string>} headers
 * @param {string | Buffer} body
 * @param {string} host
 * @param {'POST' | 'GET'} [method]
 */
export function buildRequest(path, headers, body, host, method = 'POST') {
  const bodyBuf = typeof body === 'string' ? Buffer.from(body) : body;
  const length = method === 'GET' ? '' : `content-length: ${bodyBuf.length}\r\n`;
  let head = `${method} ${path} HTTP/1.1\r\nhost: ${host}\r\n${length}`;
  for (const [name, value] of Object.entries(headers)) head += `${name}: ${value}\r\n`;
  head += '\r\n';
  return Buffer.concat([Buffer.from(head), bodyBuf]);
}

export class Connection {
  /** @param {number} port */
  constructor(port) {
    this.port = port;
    /** @type {net.Socket | undefined} */
    this.socket = undefined;
    /** @type {ResponseHandler | undefined} */
    this.handler = undefined;
    this.closed = false;
    /** @type {Promise<void> | undefined} */
    this.connecting = undefined;
    /** @type {'head' | 'body' | 'chunk-size' | 'chunk-crlf' | 'trailer' | 'done'} */
    this.state = 'head';
    /** @type {Buffer | undefined} */
    this.pending = undefined;
    this.status = 0;
    this.remaining = 0;
    this.chunked = false;
    this.closeDelimited = false;
    this.keepAlive = true;
  }

  resetParser() {
    this.state = 'head';
    this.pending = undefined;
    this.status = 0;
    this.remaining = 0;
    this.chunked = false;
    this.closeDelimited = false;
    this.keepAlive = true;
  }

  /** @returns {Promise<void>} */
  connect() {
    if (this.socket && !this.socket.destroyed) return Promise.resolve();
    if (this.connecting) return this.connecting;
    this.connecting = new Promise((/** @type {(value?: void) => void} */ resolve, reject) => {
      const socket = net.connect({ port: this.port, host: '127.0.0.1', noDelay: true });
      socket.setNoDelay(true);
      const onError = (/** @type {Error} */ error) => {
        this.connecting = undefined;
        reject(error);
      };
      socket.once('error', onError);
      socket.once('connect', () => {
        socket.off('error', onError);
        this.connecting = undefined;
        this.socket = socket;
        // A socket given up (`fail`, `close`) may still report its end while the next request
        // runs on a new one: only the current socket speaks for the connection.
        socket.on('data', (chunk) => this.socket === socket && this.onData(chunk));
        socket.on('error', (error) => this.socket === socket && this.fail(error));
        socket.on('close', () => {
          if (this.socket !== socket) return;
          if (this.handler) {
            if (this.state === 'body' && this.closeDelimited) this.finish();
            else this.fail(new Error(CLOSED_MID_RESPONSE));
          }
          this.socket = undefined;
        });
        resolve();
      });
    });
    return this.connecting;
  }

  /**
   * Sends one request; the handler hears the response.
   * @param {Buffer} bytes
   * @param {ResponseHandler} handler
   */
  async send(bytes, handler) {
    if (this.handler) throw new Error('a request is already in flight on this connection');
    this.handler = handler;
    this.resetParser();
    try {
      await this.connect();
    } catch (error) {
      this.fail(/** @type {Error} */ (error));
      return;
    }
    /** @type {net.Socket} */ (this.socket).write(bytes);
  }

  /** @param {Error} error */
  fail(error) {
    const handler = this.handler;
    this.handler = undefined;
    if (this.socket && !this.socket.destroyed) this.socket.destroy();
    this.socket = undefined;
    handler?.onError(error);
  }

  finish() {
    const handler = this.handler;
    const status = this.status;
    this.handler = undefined;
    if (!this.keepAlive && this.socket) {
      this.socket.destroy();
      this.socket = undefined;
    }
    handler?.onEnd(status);
  }

  close() {
    this.closed = true;
    if (this.socket) this.socket.destroy();
    this.socket = undefined;
  }

  /** @param {Buffer} chunk */
  onData(chunk) {
    if (!this.handler) return; // stray bytes after an abandoned request
    let buf = this.pending ? Buffer.concat([this.pending, chunk]) : chunk;
    this.pending = undefined;
    while (buf.length > 0 && this.handler) {
      if (this.state === 'head') {
        const end = buf.indexOf(CRLFCRLF);
        if (end < 0) {
          this.pending = buf;
          return;
        }
        this.parseHead(buf.toString('latin1', 0, end));
        buf = buf.subarray(end + 4);
        if (/** @type {string} */ (this.state) === 'done') {
          this.finish();
          return;
        }
      } else if (this.state === 'body') {
        if (this.closeDelimited) {
          this.handler.onBody?.(buf);
          return;
        }
        const take = Math.min(this.remaining, buf.length);
        this.handler.onBody?.(take === buf.length ? buf : buf.subarray(0, take));
        this.remaining -= take;
        buf = buf.subarray(take);
        if (this.remaining === 0) {
          if (this.chunked) this.state = 'chunk-crlf';
          else {
            this.finish();
            return;
          }
        }
      } else if (this.state === 'chunk-size' || this.state === 'trailer') {
        const end = buf.indexOf(CRLF);
        if (end < 0) {
          this.pending = buf;
          return;
        }
        const line = buf.toString('latin1', 0, end);
        buf = buf.subarray(end + 2);
        if (this.state === 'trailer') {
          if (line === '') {
            this.finish();
            return;
          }
          continue;
        }
        const size = parseInt(line, 16);
        if (Number.isNaN(size)) {
          this.fail(new Error(`bad chunk size line: ${JSON.stringify(line)}`));
          return;
        }
        if (size === 0) this.state = 'trailer';
        else {
          this.remaining = size;
          this.state = 'body';
        }
      } else if (this.state === 'chunk-crlf') {
        if (buf.length < 2) {
          this.pending = buf;
          return;
        }
        buf = buf.subarray(2);
        this.state = 'chunk-size';
      } else {
        return;
      }
    }
  }

  /** @param {string} head */
  parseHead(head) {
    const lines = head.split('\r\n');
    const statusLine = lines[0] ?? '';
    this.status = Number(statusLine.split(' ')[1]);
    /** @type {Record<string, string>} */
    const headers = {};
    for (let i = 1; i < lines.length; i++) {
      const line = /** @type {string} */ (lines[i]);
      const colon = line.indexOf(':');
      if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    this.keepAlive = (headers.connection ?? '').toLowerCase() !== 'close';
    this.handler?.onHead?.(this.status, headers);
    if (this.status === 204 || this.status === 304 || (this.status >= 100 && this.status < 200)) {
      this.state = 'done';
    } else if ((headers['transfer-encoding'] ?? '').toLowerCase().includes('chunked')) {
      this.chunked = true;
      this.state = 'chunk-size';
    } else if (headers['content-length'] !== undefined) {
      this.remaining = Number(headers['content-length']);
      this.state = this.remaining === 0 ? 'done' : 'body';
    } else {
      this.closeDelimited = true;
      this.keepAlive = false;
      this.state = 'body';
    }
  }
}
