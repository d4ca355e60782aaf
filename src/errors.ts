/**
 * One error class for everything the gateway answers on purpose. A `GatewayError` carries the
 * HTTP status and the OpenAI-style fields; `http/error-response.ts` renders it in the shape the
 * route's clients expect (OpenAI or Anthropic). Anything else that reaches the top is a bug and
 * is masked as a 500.
 *
 * It is recognized by a brand, not `instanceof`: a custom provider built against another copy of
 * the package throws that copy's class, and its 404 must still be answered as a 404.
 */
export interface GatewayErrorInit {
  status: number;
  message: string;
  /** OpenAI `error.type`; defaults from the status (see `defaultType`). */
  type?: string | undefined;
  /** The request field at fault, as the client wrote it (`messages[0].role`), or null. */
  param?: string | null | undefined;
  code?: string | null | undefined;
  /** Headers the response must carry, e.g. `retry-after` on a 429. */
  headers?: Record<string, string> | undefined;
  /**
   * What the operator needs to know and the client must not see (why the gateway's own
   * credentials failed): logged with the request id, never sent.
   */
  detail?: string | undefined;
  cause?: unknown;
}

/** Registered symbol: every copy of the package (another version, another bundle) has the same key. */
const BRAND = Symbol.for('infergate.GatewayError');

export class GatewayError extends Error {
  readonly status: number;
  readonly type: string;
  readonly param: string | null;
  readonly code: string | null;
  readonly headers: Record<string, string>;
  /** See `GatewayErrorInit.detail`. */
  readonly detail?: string;

  constructor(init: GatewayErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'GatewayError';
    this.status = init.status;
    this.type = init.type ?? defaultType(init.status);
    this.param = init.param ?? null;
    this.code = init.code ?? null;
    this.headers = init.headers ?? {};
    if (init.detail !== undefined) this.detail = init.detail;
  }
}

// On the prototype, not the instance: no own property for equality checks and logs to show.
Object.defineProperty(GatewayError.prototype, BRAND, { value: true });

function defaultType(status: number): string {
  if (status === 401 || status === 400 || status === 404 || status === 405 || status === 409 || status === 413) {
    return 'invalid_request_error';
  }
  if (status === 403) return 'permission_error';
  if (status === 429) return 'rate_limit_exceeded';
  return 'server_error';
}

/** 400 naming the field at fault: the common case of bad input. */
export function invalidRequest(message: string, param: string | null = null, code: string | null = null): GatewayError {
  return new GatewayError({ status: 400, message, param, code });
}

/*
 * The upstream failures, one constructor each so the same failure always carries the same code.
 * All but the timeout are 502 `upstream_error`: the gateway is fine, the server behind it is not.
 */

/** The upstream answered something the gateway cannot use: not JSON, a field missing, a malformed event. */
export function upstreamInvalidResponse(message: string, cause?: unknown): GatewayError {
  return upstreamFailure(message, 'upstream_invalid_response', cause);
}

/** The upstream's stream ended before its terminal event: what came so far is not the whole answer. */
export function upstreamStreamCut(message = 'The upstream stream ended before the answer was complete.'): GatewayError {
  return upstreamFailure(message, 'upstream_stream_cut');
}

/** An error the upstream reported itself in a successful answer or stream: its message, and its code when it has one. */
export function upstreamReportedError(message: string, code: string | undefined): GatewayError {
  return upstreamFailure(message, code ?? 'upstream_error');
}

/** The upstream refused the gateway's own credentials; not the client's key, so never a 401. */
export function upstreamAuthFailed(): GatewayError {
  return upstreamFailure('The upstream rejected the gateway\u2019s credentials for this model.', 'upstream_auth_failed');
}

export function upstreamUnreachable(cause: unknown): GatewayError {
  return upstreamFailure('The upstream could not be reached or closed the connection.', 'upstream_unreachable', cause);
}

export function upstreamTooLarge(limitBytes: number): GatewayError {
  return upstreamFailure(`The upstream's answer is larger than the gateway accepts (${limitBytes} bytes).`, 'upstream_too_large');
}

export function upstreamTimeout(cause: unknown): GatewayError {
  return new GatewayError({ status: 504, type: 'timeout_error', message: 'The upstream did not answer in time.', code: 'upstream_timeout', cause });
}

/**
 * A deployment that had not started its answer within the model's `firstByteTimeoutMs`: the
 * client hears of the budget; which deployment it was is the operator's (`detail`, logged).
 */
export function upstreamFirstByteTimeout(deployment: string, budgetMs: number): GatewayError {
  return new GatewayError({
    status: 504,
    type: 'timeout_error',
    message: `The upstream sent no first byte within the model's first-byte timeout (${budgetMs} ms).`,
    code: 'upstream_first_byte_timeout',
    detail: `deployment ${deployment} sent no first byte within ${budgetMs} ms`,
  });
}

function upstreamFailure(message: string, code: string, cause?: unknown): GatewayError {
  return new GatewayError({ status: 502, type: 'upstream_error', message, code, cause });
}

/** True for a `GatewayError` of any copy of the package (see the brand above). */
export function isGatewayError(error: unknown): error is GatewayError {
  return typeof error === 'object' && error !== null && (error as { [BRAND]?: unknown })[BRAND] === true;
}

/** Aborts are their own category: a client that left is not a failure to log or wrap. */
export function isAbortError(error: unknown): boolean {
  return error instanceof Error && (error.name === 'AbortError' || error.name === 'TimeoutError' || (error as { code?: string }).code === 'ABORT_ERR');
}

/**
 * The error a client may see: a `GatewayError` as it is, anything else masked as a 500 with no
 * detail (the original is logged by the caller, never sent).
 */
export function toPublicError(error: unknown): GatewayError {
  if (isGatewayError(error)) return error;
  return new GatewayError({ status: 500, message: 'The gateway had an internal error while processing the request.', cause: error });
}
