import type { Gateway } from '../src/gateway.js';
import { withoutUndefined } from '../src/optional.js';

/** The part of Bun's server this helper uses, declared here so the package needs no `@types/bun`. */
export interface BunServer {
  readonly port: number;
  readonly hostname: string;
  readonly url: URL;
  stop(closeActiveConnections?: boolean): Promise<void> | void;
}

export interface BunServeOptions {
  port?: number | undefined;
  hostname?: string | undefined;
  /** Seconds a connection may stay silent. Default here 0 (never), see `serve`. */
  idleTimeout?: number | undefined;
  /** Extra per-request context for hooks and the key store, next to `{ server }`. */
  context?: ((request: Request, server: BunServer) => Record<string, unknown>) | undefined;
  /** Any other `Bun.serve` option (tls, unix, maxRequestBodySize…). */
  [option: string]: unknown;
}

declare const Bun: {
  serve(options: Record<string, unknown> & { fetch(request: Request, server: BunServer): Response | Promise<Response> }): BunServer;
};

/**
 * `Bun.serve` with the gateway as its `fetch`. `request.signal` fires when the client leaves,
 * which aborts the upstream call. `idleTimeout` defaults to 0 because Bun otherwise closes a
 * connection silent for 10 s, cutting a stream while a model thinks.
 */
export function serve(gateway: Gateway, options: BunServeOptions = {}): BunServer {
  const { context, ...serveOptions } = options;
  return Bun.serve({
    idleTimeout: 0,
    // An option given as undefined is not set: Bun's default must not replace ours.
    ...withoutUndefined(serveOptions),
    fetch: function infergateBun(request: Request, server: BunServer) {
      return gateway.handle(request, { server, ...context?.(request, server) });
    },
  });
}
