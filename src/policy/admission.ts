import { GatewayError } from '../errors.js';
import type { RouteContext } from '../http/route.js';
import { withoutUndefined } from '../optional.js';
import type { AdmitResult, CounterState, KeyLimits, LimitReason } from './limit-engine.js';
import { retryAfterSeconds } from './retry-after.js';

/** A request let through the key's limits: the headers to send and the slot to give back. */
export interface Admission {
  limits: KeyLimits;
  /** `x-ratelimit-*` headers, on the answer whatever it is. */
  headers: Record<string, string>;
  slot?: string | undefined;
  /** Whether the engine counted the request (false when there are no limits, or it failed open). */
  counted: boolean;
}

/**
 * Checks the caller's balance and limits before any upstream call. Refusals are 429s in the
 * route's shape with `retry-after` (seconds until the request could pass) and `x-ratelimit-*`;
 * an exhausted balance or quota also says `insufficient_quota` and `x-should-retry: false`, so
 * SDKs stop retrying what only a top-up fixes.
 */
export async function admitRequest(context: RouteContext): Promise<Admission> {
  const { key, options, requestId } = context;
  const { policies } = options;
  if (typeof key.balance === 'number' && key.balance <= 0) throw quotaExhausted(policies.quotaRetryAfterSeconds, {});
  const limits = key.limits ? { ...policies.limits, ...withoutUndefined(key.limits) } : policies.limits;
  if (!hasLimits(limits)) return { limits, headers: {}, counted: false };

  let result: AdmitResult;
  try {
    result = await policies.limitEngine.admit(key.id, limits, Date.now());
  } catch (error) {
    options.logger.error('limit engine unavailable', {
      requestId,
      failOpen: policies.failOpen,
      message: error instanceof Error ? error.message : String(error),
    });
    if (policies.failOpen) return { limits, headers: {}, counted: false };
    throw new GatewayError({
      status: 503,
      message: 'Rate limits cannot be checked right now; try again shortly.',
      code: 'limits_unavailable',
      headers: { 'retry-after': '1' },
    });
  }
  const headers = rateLimitHeaders(result.requests, result.tokens);
  if (result.allowed) return { limits, headers, slot: result.slot, counted: true };
  if (result.reason === 'quota') throw quotaExhausted(policies.quotaRetryAfterSeconds, headers);
  throw new GatewayError({
    status: 429,
    message: LIMIT_MESSAGES[result.reason],
    code: 'rate_limit_exceeded',
    headers: { ...headers, 'retry-after': retryAfterSeconds(result.retryAfterMs) },
  });
}

const LIMIT_MESSAGES: Record<Exclude<LimitReason, 'quota'>, string> = {
  requests: 'Rate limit reached for requests per minute on this API key; retry after the time in the retry-after header.',
  tokens: 'Rate limit reached for tokens per minute on this API key; retry after the time in the retry-after header.',
  concurrency: 'Too many concurrent requests on this API key; retry when one of them has finished.',
};

function quotaExhausted(retryAfter: number, headers: Record<string, string>): GatewayError {
  return new GatewayError({
    status: 429,
    type: 'insufficient_quota',
    message: 'You exceeded your current quota: this API key has no balance left.',
    code: 'insufficient_quota',
    headers: { ...headers, 'retry-after': String(retryAfter), 'x-should-retry': 'false' },
  });
}

function hasLimits(limits: KeyLimits): boolean {
  return (
    limits.requestsPerMinute !== undefined || limits.tokensPerMinute !== undefined || limits.concurrentRequests !== undefined || limits.quota !== undefined
  );
}

/** OpenAI's header names; resets as durations (`12s`), as OpenAI writes them. */
function rateLimitHeaders(requests: CounterState | undefined, tokens: CounterState | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  if (requests) {
    headers['x-ratelimit-limit-requests'] = String(requests.limit);
    headers['x-ratelimit-remaining-requests'] = String(requests.remaining);
    headers['x-ratelimit-reset-requests'] = `${Math.ceil(requests.resetMs / 1000)}s`;
  }
  if (tokens) {
    headers['x-ratelimit-limit-tokens'] = String(tokens.limit);
    headers['x-ratelimit-remaining-tokens'] = String(tokens.remaining);
    headers['x-ratelimit-reset-tokens'] = `${Math.ceil(tokens.resetMs / 1000)}s`;
  }
  return headers;
}
