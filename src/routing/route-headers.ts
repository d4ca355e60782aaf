import { invalidRequest } from '../errors.js';
import { ROUTE_ORDERS, type RouteOrder, type RouteReason } from './deployments.js';

/** Request header choosing the order of a model's deployments: `latency` (default), `price` or `configured`. */
export const ROUTE_ORDER_HEADER = 'x-infergate-route-order';

/** Answer header naming the deployment that served the request and why. */
export const ROUTE_HEADER = 'x-infergate-route';

/** Longest deployment id written in `x-infergate-route` (a wildcard's ids hold the client's model name). */
const ROUTE_ID_CHARS = 128;

const SAFE_CHAR = /^[A-Za-z0-9\-._~/:@+]$/;
/** An id written as it is (the common case: ids from the config). */
const SAFE_ID = /^[A-Za-z0-9\-._~/:@+]{1,128}$/;

/** UTF-8 bytes as `%XX` (a lone surrogate, which encodeURIComponent rejects, becomes U+FFFD). */
function percentEncoded(char: string): string {
  return Array.from(Buffer.from(char, 'utf8'), (byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`).join('');
}

/** The order the request asks for; a value other than the three is a 400 naming the header. */
export function routeOrderOf(request: Request): RouteOrder {
  const value = request.headers.get(ROUTE_ORDER_HEADER);
  if (value === null) return 'latency';
  const order = value.trim().toLowerCase();
  if ((ROUTE_ORDERS as readonly string[]).includes(order)) return order as RouteOrder;
  throw invalidRequest(`Invalid ${ROUTE_ORDER_HEADER}: expected one of ${ROUTE_ORDERS.join(', ')}.`, ROUTE_ORDER_HEADER, 'invalid_value');
}

export interface RouteTaken {
  deployment: string;
  /** Why the plan's first deployment was chosen; `fallback` when another one served the request. */
  reason: RouteReason | 'fallback';
  order: RouteOrder;
  attempts: number;
}

/**
 * `deployment=<id>; reason=<reason>; order=<order>; attempts=<n>`: the id percent-encoded
 * outside `A-Za-z0-9 - . _ ~ / : @ +` and cut to 128 characters, so the value stays a short,
 * parseable header whatever a wildcard model's name holds.
 */
export function routeHeaderValue(route: RouteTaken): string {
  const id = SAFE_ID.test(route.deployment)
    ? route.deployment
    : Array.from(route.deployment.slice(0, ROUTE_ID_CHARS), (char) => (SAFE_CHAR.test(char) ? char : percentEncoded(char))).join('');
  return `deployment=${id}; reason=${route.reason}; order=${route.order}; attempts=${route.attempts}`;
}
