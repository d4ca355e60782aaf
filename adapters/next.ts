import type { Gateway } from '../src/gateway.js';

type RouteParams = Record<string, string | string[] | undefined>;

/** The second argument Next.js passes to a route handler (`params` is a promise since Next 15). */
export interface NextRouteContext {
  params: Promise<RouteParams> | RouteParams;
}

export interface NextRouteOptions {
  /** Extra per-request context for hooks and the key store, e.g. the user your auth resolves. */
  context?: ((request: Request) => Record<string, unknown> | Promise<Record<string, unknown>>) | undefined;
}

type Handler = (request: Request, route: NextRouteContext) => Promise<Response>;

/**
 * Route handlers for an App Router catch-all route: in `app/api/[...path]/route.ts`,
 * `export const { GET, POST } = nextRouteHandlers(gateway)` answers `/api/v1/chat/completions`.
 * The gateway sees the catch-all's path, so the route's folder and Next's `basePath` are its
 * mount point. Hooks and the key store get `{ nextRequest, params, …context(request) }`.
 */
export function nextRouteHandlers(
  gateway: Gateway,
  options: NextRouteOptions = {},
): Record<'GET' | 'POST' | 'HEAD' | 'OPTIONS' | 'PUT' | 'PATCH' | 'DELETE', Handler> {
  async function infergateNext(request: Request, route: NextRouteContext): Promise<Response> {
    const params = await route.params;
    const context = { nextRequest: request, params, ...(await options.context?.(request)) };
    return gateway.handle(belowMount(request, params), context);
  }
  return {
    GET: infergateNext,
    POST: infergateNext,
    HEAD: infergateNext,
    OPTIONS: infergateNext,
    PUT: infergateNext,
    PATCH: infergateNext,
    DELETE: infergateNext,
  };
}

/** The request re-addressed to the catch-all segments; unchanged when the route has none. */
function belowMount(request: Request, params: RouteParams): Request {
  const segments = Object.values(params).find(Array.isArray);
  if (!segments) return request;
  const url = new URL(request.url);
  url.pathname = '/' + segments.map(encodeURIComponent).join('/');
  const body = request.method === 'GET' || request.method === 'HEAD' ? {} : { body: request.body, duplex: 'half' };
  return new Request(url, { method: request.method, headers: request.headers, signal: request.signal, ...body } as RequestInit);
}
