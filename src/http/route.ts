import type { KeyRecord } from '../auth/key-store.js';
import type { Admission } from '../policy/limit-engine.js';
import type { ModelKind } from '../routing/model.js';
import type { GatewayRuntime } from '../runtime.js';
import type { RequestTiming } from '../telemetry/request-timing.js';
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
  /** The key's admission, taken before the body was read, on a route that `admits`. */
  admission?: EarlyAdmission | undefined;
  /** The request's overhead clock, with metrics on (`telemetry/request-timing.ts`). */
  timing?: RequestTiming | undefined;
}

export interface Route {
  method: 'GET' | 'POST' | 'DELETE';
  /** Path below the base path; `:name` segments are parameters. */
  path: string;
  /** Error body shape, and the auth headers accepted (Anthropic: `x-api-key` or Bearer). */
  style: ClientStyle;
  /** For a route both kinds of clients call: the style a request's headers ask for, instead of `style`. */
  styleFor?(request: Request): ClientStyle;
  /** What the key's limits admit before the handler reads the body (see `RouteAdmission`); nothing when absent. */
  admits?: RouteAdmission;
  /**
   * A WebSocket handshake on this path (a GET with `Upgrade: websocket`) is answered 426 rather
   * than 405: Codex's cue to send its Responses requests over HTTP at once.
   */
  webSocketFallback?: true;
  handler: (context: RouteContext) => Promise<Response>;
}

/**
 * What a route admits before its body is read (`Route.admits`), so that a key over its limits
 * has nothing read, buffered or parsed for it:
 * - a model kind: every limit of the key (balance, quota, requests and tokens per minute,
 *   concurrency) and its dollar budgets as far as they can be judged without the model (see
 *   `BudgetTarget` in `policy/admission.ts`); the model's own part once the body names it;
 * - `requests`: requests per minute and concurrency only, for what costs no tokens or dollars
 *   (token counts, usage reports, video downloads, stored responses).
 */
export type RouteAdmission = ModelKind | 'requests';

/** The key's admission taken before the body (`policy/route-admission.ts`), until the request's ledger claims it. */
export interface EarlyAdmission {
  /** Whether no ledger has claimed it yet. */
  readonly waiting: boolean;
  readonly admission: Admission;
  /** The request's ledger takes the admission over (it settles it when the request ends). */
  claim(): Admission;
}
