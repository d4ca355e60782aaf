import type { KeyRecord } from '../auth/key-store.js';
import type { GatewayRuntime } from '../runtime.js';
import type { ClientStyle } from './client-style.js';

/** Everything a route handler gets: the authenticated caller and the gateway's parts. */
export interface RouteContext {
  request: Request;
  url: URL;
  params: Record<string, string>;
  requestId: string;
  key: KeyRecord;
  options: GatewayRuntime;
  serverContext: unknown;
  /** Fires only when the client disconnects; pass it to every upstream call. */
  signal: AbortSignal;
}

export interface Route {
  method: 'GET' | 'POST' | 'DELETE';
  /** Path below the base path; `:name` segments are parameters. */
  path: string;
  /** Error body shape, and the auth headers accepted (Anthropic: `x-api-key` or Bearer). */
  style: ClientStyle;
  /** For a route both kinds of clients call: the style a request's headers ask for, instead of `style`. */
  styleFor?(request: Request): ClientStyle;
  handler: (context: RouteContext) => Promise<Response>;
}
