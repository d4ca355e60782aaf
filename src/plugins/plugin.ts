import type { ServerAdapterPlugin } from '@whatwg-node/server';
import type { KeyRecord } from '../auth/key-store.js';
import type { RequestObserver } from '../policy/events.js';
import type { TextStage } from './text-stage.js';

/**
 * A plugin: a whatwg-node server plugin (`onRequest`/`onResponse` around the whole handler,
 * `instrumentation`, dispose), plus the gateway's own stages, in the order a request meets them:
 * `onGatewayRequest` → `onAuthenticated` → `wrapText` (text generations) → `onAttempt` (each upstream attempt) → `onUsage` (the
 * request's end; after the answer for a stream) → `onGatewayResponse`; `onToolCall` once per MCP
 * tool call at `/mcp`. The hooks, the access log and OpenTelemetry are plugins too.
 *
 * `onGatewayRequest` and `onAuthenticated` may refuse a request by throwing (a `GatewayError`
 * keeps its status, anything else is a logged 500), answered in the route's error shape: access
 * fails closed. A failure in `onAttempt`, `onUsage`, `onToolCall` or `onGatewayResponse` is logged and never
 * changes the answer. whatwg-node's own stages run outside the gateway, with whatwg-node's rules.
 */
export interface GatewayPlugin extends ServerAdapterPlugin<Record<string, unknown>>, RequestObserver {
  /** Before routing and authentication, with the gateway's request id; `respondWith` answers early. */
  onGatewayRequest?(payload: RequestHookPayload): void | Promise<void>;
  /** The key is known (the request passed authentication); awaited before the route's handler runs. A throw refuses the request. */
  onAuthenticated?(payload: AuthenticatedPayload): void | Promise<void>;
  /**
   * Around each text generation (Chat, Responses, Messages, Gemini), after admission and
   * conversation state, before the response cache and the deployments, in plugin order
   * (`text-stage.ts`). Guardrails are such stages.
   */
  wrapText?: TextStage;
  /** The answer is built, with the gateway's headers, before it is sent; `setResponse` replaces it. */
  onGatewayResponse?(payload: ResponseHookPayload): void | Promise<void>;
}

export interface RequestHookPayload {
  request: Request;
  requestId: string;
  serverContext: unknown;
  /** Answer now with this response; the gateway does nothing else for the request. */
  respondWith(response: Response): void;
}

export interface AuthenticatedPayload {
  request: Request;
  requestId: string;
  /** Who is calling: the key's record (its `id`, never the key itself). */
  key: KeyRecord;
  serverContext: unknown;
}

export interface ResponseHookPayload {
  request: Request;
  requestId: string;
  response: Response;
  serverContext: unknown;
  /** Replace the response (e.g. to add headers). */
  setResponse(response: Response): void;
}
