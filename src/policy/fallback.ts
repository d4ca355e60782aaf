import { GatewayError, isAbortError, isGatewayError, toPublicError } from '../errors.js';
import type { Defaulted } from '../optional.js';
import type { Deployment } from '../routing/deployments.js';
import type { DeploymentHealth } from './deployment-health.js';
import { FirstByteDeadline } from './first-byte-deadline.js';
import { retryAfterMsOf, retryAfterSeconds } from './retry-after.js';

export interface RetryPolicy {
  /**
   * Attempts after the first, moving to the next deployment each time (and back to the first
   * after the last). Default: one attempt per deployment, so a model with one deployment is not
   * retried by the gateway: its clients' SDKs retry already, and the two would multiply.
   */
  retries?: number | undefined;
  /** Base of the jittered exponential backoff before trying a deployment again, in ms. Default 250. */
  backoffMs?: number | undefined;
  /** Cap of that backoff, in ms. Default 4000. */
  maxBackoffMs?: number | undefined;
  /**
   * Longest upstream `retry-after` the gateway waits out itself, in ms. A longer one ends the
   * retries and reaches the client, which is better placed to wait. Default 5000.
   */
  maxRetryAfterMs?: number | undefined;
  /** Retryable failures in a row that put a deployment in cooldown. Default 3. */
  failuresBeforeCooldown?: number | undefined;
  /** How long a failing deployment is tried last, in ms. Default 30,000. */
  cooldownMs?: number | undefined;
  /**
   * Longest wait for an attempt's first byte (a stream's first event, a whole JSON answer), in
   * ms, for models that set none (`ModelEntry.firstByteTimeoutMs`): past it the attempt is
   * cancelled and the next deployment tried. Default: none (0), since a JSON answer's first byte
   * comes when the whole answer is ready, and no one budget fits every model and request.
   */
  firstByteTimeoutMs?: number | undefined;
}

export type ResolvedRetryPolicy = Defaulted<Omit<RetryPolicy, 'retries' | 'firstByteTimeoutMs'>> & Pick<RetryPolicy, 'retries' | 'firstByteTimeoutMs'>;

export const DEFAULT_RETRY_POLICY: ResolvedRetryPolicy = {
  backoffMs: 250,
  maxBackoffMs: 4000,
  maxRetryAfterMs: 5000,
  failuresBeforeCooldown: 3,
  cooldownMs: 30_000,
};

export interface AttemptOutcome {
  deployment: Deployment;
  attempt: number;
  startedAt: number;
  error?: GatewayError | undefined;
  willRetry: boolean;
  delayMs?: number | undefined;
}

export interface FallbackRun<T> {
  /** Deployments in the order to try them (see `planRoute`). */
  plan: readonly Deployment[];
  policy: ResolvedRetryPolicy;
  health: Pick<DeploymentHealth, 'succeeded' | 'failed'>;
  /**
   * False when replaying could repeat a side effect (the client asked for no retries, or the
   * request carries tools the upstream runs itself): then only failures that prove the upstream
   * never took the request (refused connection, 429) are retried.
   */
  replaySafe: boolean;
  signal: AbortSignal;
  /** The model's first-byte timeout, in ms (0: none); default the policy's `firstByteTimeoutMs`. */
  firstByteTimeoutMs?: number | undefined;
  /**
   * One attempt on one deployment. It must resolve only once the answer's first byte is secured
   * (a stream's first event, or a whole JSON body): everything before that can still be
   * retried, nothing after it. Its upstream calls carry `signal`: the client's, or the
   * attempt's own under a first-byte timeout.
   */
  attempt(deployment: Deployment, attempt: number, signal: AbortSignal): Promise<T>;
  onAttempt(outcome: AttemptOutcome): void;
  random?: (() => number) | undefined;
}

/**
 * Tries the plan's deployments in turn until one answers: a retryable failure (timeout,
 * unreachable upstream, 408, 409, 429, 5xx) moves on to the next deployment, waiting out a
 * `retry-after` and a jittered backoff when it comes back to one already tried. When every
 * attempt was a 429, the client gets the shortest wait any deployment asked for.
 */
export async function runWithFallback<T>(run: FallbackRun<T>): Promise<{ result: T; deployment: Deployment; attempts: number }> {
  const random = run.random ?? Math.random;
  const readyAt = new Map<string, number>();
  const tries = new Map<string, number>();
  let allRateLimited = true;
  const retries = run.policy.retries ?? run.plan.length - 1;
  const firstByteTimeoutMs = firstByteBudget(run);
  for (let attempt = 1; ; attempt++) {
    const deployment = run.plan[(attempt - 1) % run.plan.length]!;
    tries.set(deployment.id, (tries.get(deployment.id) ?? 0) + 1);
    const startedAt = Date.now();
    const deadline = firstByteTimeoutMs ? new FirstByteDeadline(run.signal, deployment.id, firstByteTimeoutMs) : undefined;
    try {
      const result = deadline ? await deadline.race(run.attempt(deployment, attempt, deadline.signal)) : await run.attempt(deployment, attempt, run.signal);
      deadline?.secured();
      // The attempt resolved at its first byte: its duration is the time to first byte.
      run.health.succeeded(deployment, Date.now() - startedAt);
      run.onAttempt({ deployment, attempt, startedAt, willRetry: false });
      return { result, deployment, attempts: attempt };
    } catch (caught) {
      deadline?.abandoned();
      // A client that left, or a failure that is no answer of the upstream (a bug, masked as a
      // 500 for the observers): reported, never retried, and no mark against the deployment.
      if ((isAbortError(caught) && run.signal.aborted) || !isGatewayError(caught)) {
        run.onAttempt({ deployment, attempt, startedAt, error: toPublicError(caught), willRetry: false });
        throw caught;
      }
      const error = caught;
      const retryAfterMs = error.status === 429 || error.status === 503 ? retryAfterMsOf(error.headers) : undefined;
      if (error.status !== 429) allRateLimited = false;
      if (retryAfterMs !== undefined) readyAt.set(deployment.id, Date.now() + retryAfterMs);
      // The upstream failed whether or not this request may be replayed: its health hears of it,
      // unless the request may be what failed it.
      if (isRetryable(error) && !mayBeTheRequests(error)) run.health.failed(deployment, retryAfterMs, Date.now(), Date.now() - startedAt);
      const retryable = isRetryable(error) && (run.replaySafe || neverProcessed(error));

      let delayMs: number | undefined;
      if (retryable && attempt <= retries) {
        const next = run.plan[attempt % run.plan.length]!;
        const waitForUpstream = Math.max(0, (readyAt.get(next.id) ?? 0) - Date.now());
        const backoff = tries.has(next.id) ? jitteredBackoff(run.policy, tries.get(next.id)!, random) : 0;
        const delay = Math.max(waitForUpstream, backoff);
        if (waitForUpstream <= run.policy.maxRetryAfterMs) delayMs = delay;
      }
      run.onAttempt({ deployment, attempt, startedAt, error, willRetry: delayMs !== undefined, delayMs });
      if (delayMs === undefined) throw allRateLimited ? shortestWait(error, readyAt) : error;
      if (delayMs > 0) await sleep(delayMs, run.signal);
    }
  }
}

/**
 * The attempts' first-byte timeout, or undefined for none. A request that may not be replayed
 * gets none: a timed-out attempt may have been processed (a tool the upstream runs may have
 * acted), so it could not move to another deployment anyway, and cutting it would only turn a
 * slow answer into a 504 that the client's SDK retries, repeating what the gateway must not.
 */
function firstByteBudget(run: FallbackRun<unknown>): number | undefined {
  if (!run.replaySafe) return undefined;
  return (run.firstByteTimeoutMs ?? run.policy.firstByteTimeoutMs) || undefined;
}

/** Failures another attempt may fix: the upstream was busy, down, slow or failed itself. */
export function isRetryable(error: GatewayError): boolean {
  return error.status === 408 || error.status === 409 || error.status === 429 || error.status >= 500;
}

/**
 * Failures the gateway finds in an answer's content (not the JSON or stream that was asked for,
 * larger than it accepts) follow from what the request asked as much as from the upstream: one
 * tenant could provoke them at will and cool a deployment down for every tenant. They are retried
 * but not held against the deployment; its refusals, timeouts, 5xx and 429 are.
 */
function mayBeTheRequests(error: GatewayError): boolean {
  return error.code === 'upstream_invalid_response' || error.code === 'upstream_too_large';
}

/** Failures that prove the upstream never started on the request, so a retry replays nothing. */
function neverProcessed(error: GatewayError): boolean {
  if (error.status === 429) return true;
  const code = (error.cause as { code?: string } | undefined)?.code;
  return code === 'ECONNREFUSED' || code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'ENOTFOUND' || code === 'EAI_AGAIN';
}

/** Full jitter: uniform in [0, min(cap, base · 2^(n−1))]. */
function jitteredBackoff(policy: ResolvedRetryPolicy, previousTries: number, random: () => number): number {
  return Math.round(random() * Math.min(policy.maxBackoffMs, policy.backoffMs * 2 ** (previousTries - 1)));
}

/**
 * The last 429, carrying the soonest time any deployment will take requests again. With one
 * deployment the upstream's own headers go through untouched (`retry-after-ms` included).
 */
function shortestWait(error: GatewayError, readyAt: Map<string, number>): GatewayError {
  if (readyAt.size <= 1) return error;
  const soonest = Math.max(0, Math.min(...readyAt.values()) - Date.now());
  const headers: Record<string, string> = { ...error.headers, 'retry-after': retryAfterSeconds(soonest) };
  delete headers['retry-after-ms'];
  return new GatewayError({
    status: error.status,
    type: error.type,
    message: error.message,
    param: error.param,
    code: error.code,
    headers,
    cause: error.cause,
  });
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
