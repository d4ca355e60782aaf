import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Gateway } from '../src/gateway.js';

export interface ListenOptions {
  /** Default 8787; 0 picks a free port (`url` has the real one). */
  port?: number | undefined;
  /** Default `127.0.0.1`; `0.0.0.0` accepts other machines. */
  host?: string | undefined;
  /** Extra per-request context for hooks and the key store, next to `{ req, res }`. */
  context?: ((req: IncomingMessage) => Record<string, unknown>) | undefined;
}

/** `http.createServer(gateway)` (the gateway is a request listener), with a per-request context if given. */
export function createNodeServer(gateway: Gateway, { context }: Pick<ListenOptions, 'context'> = {}): Server {
  if (!context) return createServer(gateway);
  return createServer(function infergateNode(req, res) {
    void gateway.handle(req, res, context(req));
  });
}

/**
 * Creates the server and listens. `close` stops listening and closes open connections: streams
 * in flight are cut, and their upstream calls aborted.
 */
export async function listen(gateway: Gateway, options: ListenOptions = {}): Promise<{ url: string; server: Server; close(): Promise<void> }> {
  const server = createNodeServer(gateway, options);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject).listen(options.port ?? 8787, options.host ?? '127.0.0.1', () => resolve(void server.off('error', reject)));
  });
  const { address, port } = server.address() as AddressInfo;
  const close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return { url: `http://${address.includes(':') ? `[${address}]` : address}:${port}`, server, close };
}
