import type { IncomingMessage } from 'node:http';
import type { NodeRequest } from '@whatwg-node/server';

/** A Node request as a host framework hands it over, perhaps after the host's body parser ran. */
export interface HostIncomingMessage extends IncomingMessage {
  /** What a body parser kept (`express.json()`: an object; `express.raw()`: bytes; `express.text()`: a string). */
  body?: unknown;
  /** The exact bytes, when the app kept them (the usual `verify: (req, res, buf) => { req.rawBody = buf }`). */
  rawBody?: unknown;
}

/**
 * Describes a request that a Node host framework (Express, Fastify, Connect…) routed to the
 * gateway, for `gateway.handleNodeRequestAndResponse`. Two things differ from a bare
 * `http.createServer(gateway)`, and both are handled here rather than in each adapter:
 *
 * - `url` is the path **below the host's mount point** (Express already strips
 *   `app.use('/ai', …)`'s prefix from `req.url`; the Fastify adapter strips its plugin prefix), so
 *   the gateway answers wherever it is mounted, and `basePath` stays its own prefix below that.
 *   `req.originalUrl`, which whatwg-node would prefer, keeps the mount prefix.
 * - The body stream may already have been read by a host body parser. Why this matters: the
 *   gateway reads the body as a stream (size limits, UTF-8 checks, multipart), and whatwg-node,
 *   given a parsed object, would hand it an empty body with only `request.json()` faked. So when
 *   the stream has ended, the body is rebuilt from what the parser kept: `req.rawBody` bytes, else
 *   `req.body` (bytes and strings as they are, a parsed object as JSON), read once, never twice.
 *   A parser that kept nothing (a multipart parser that stored files elsewhere) leaves an empty
 *   body: mount the gateway before such parsers, as docs/hosts.md says. `keptText` is the body an
 *   adapter recovered otherwise (Express: the text of a JSON parser's syntax error).
 */
export function hostNodeRequest(req: HostIncomingMessage, url: string, keptText?: string): NodeRequest {
  const consumed = req.readableEnded;
  const request: NodeRequest & AsyncIterable<Uint8Array> = {
    method: req.method,
    headers: req.headers,
    url,
    socket: req.socket,
    once: (event, listener) => void req.once(event, listener),
    // The untouched stream is the body (whatwg-node iterates the request object itself).
    [Symbol.asyncIterator]: consumed ? emptyBody : () => req[Symbol.asyncIterator](),
  };
  if (consumed) request.body = keptText ?? keptBody(req);
  return request;
}

function keptBody(req: HostIncomingMessage): string | Uint8Array | undefined {
  const kept = req.rawBody ?? req.body;
  if (kept === undefined || kept === null) return undefined;
  if (typeof kept === 'string' || kept instanceof Uint8Array) return kept;
  return JSON.stringify(kept);
}

async function* emptyBody(): AsyncGenerator<Uint8Array> {}
