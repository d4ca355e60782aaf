import type { Gateway } from '../src/gateway.js';
import { withoutUndefined } from '../src/optional.js';

export interface DenoAddr {
  hostname: string;
  port: number;
}

/** The part of `Deno.serve`'s result this helper uses, declared here so the package needs no Deno types. */
export interface DenoServer {
  readonly addr: DenoAddr;
  readonly finished: Promise<void>;
  shutdown(): Promise<void>;
}

/** What `Deno.serve` passes with each request (`remoteAddr`, `completed`). */
export type DenoServeInfo = Record<string, unknown>;

export interface DenoServeOptions {
  port?: number | undefined;
  hostname?: string | undefined;
  signal?: AbortSignal | undefined;
  onListen?: ((addr: DenoAddr) => void) | undefined;
  /** Extra per-request context for hooks and the key store, next to `{ info }`. */
  context?: ((request: Request, info: DenoServeInfo) => Record<string, unknown>) | undefined;
  /** Any other `Deno.serve` option (cert, key, …). */
  [option: string]: unknown;
}

declare const Deno: {
  serve(options: Record<string, unknown>, handler: (request: Request, info: DenoServeInfo) => Response | Promise<Response>): DenoServer;
};

/** `Deno.serve` with the gateway as its handler. `request.signal` fires when the client leaves, which aborts the upstream call. */
export function serve(gateway: Gateway, options: DenoServeOptions = {}): DenoServer {
  const { context, ...serveOptions } = options;
  return Deno.serve(withoutUndefined(serveOptions), function infergateDeno(request: Request, info: DenoServeInfo) {
    return gateway.handle(request, { info, ...context?.(request, info) });
  });
}
