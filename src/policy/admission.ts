import { GatewayError } from '../errors.js';
import type { RouteContext } from '../http/route.js';
import { withoutUndefined } from '../optional.js';
import type { ModelEntry } from '../routing/model.js';
import type { BudgetAccount } from './budget.js';
import { budgetExhausted, budgetHeaders } from './budget-admission.js';
import type { AdmitResult, BudgetCheck, CounterState, KeyLimits, LimitReason } from './limit-engine.js';
import { retryAfterSeconds } from './retry-after.js';

/** A request let through the key's limits: the headers to send and the slot to give back. */
export interface Admission {
  limits: KeyLimits;
  /** `x-ratelimit-*` and `x-infergate-budget-*` headers, on the answer whatever it is. */
  headers: Record<string, string>;
  slot?: string | undefined;
  /** Whether the engine counted the request (false when there are no limits, or it failed open). */
  counted: boolean;
  /** The budgets the request's dollars are added to when it ends. */
  budgets?: readonly BudgetAccount[] | undefined;
}

/**
 * Checks the caller's balance and limits before any upstream call. Refusals are 429s in the
 * route's shape with `retry-after` (seconds until the request could pass) and `x-ratelimit-*`;
 * an exhausted balance, quota or dollar budget also says `insufficient_quota` and
 * `x-should-retry: false`, so SDKs stop retrying what only a top-up (or the budget's reset) fixes.
 * A spent budget refuses only models that cost money (`model`; without one, any).
 */
export async function admitRequest(context: RouteContext, model?: ModelEntry): Promise<Admission> {
  const { key, options } = context;
  const { policies } = options;
  if (typeof key.balance === 'number' && key.balance <= 0) throw quotaExhausted(policies.quotaRetryAfterSeconds, {});
  const limits = key.limits ? { ...policies.limits, ...withoutUndefined(key.limits) } : policies.limits;
  let budgets: readonly BudgetAccount[];
  try {
    budgets = policies.budgets.accountsOf(key);
    if (budgets.length > 0 && !policies.limitEngine.supportsBudgets) throw new TypeError('the limit engine does not keep dollar budgets (supportsBudgets)');
  } catch (error) {
    return unavailable(context, limits, 'budget cannot be enforced', error);
  }
  if (!hasLimits(limits) && budgets.length === 0) return { limits, headers: {}, counted: false };
  const check: BudgetCheck | undefined =
    budgets.length === 0 ? undefined : { accounts: budgets, enforce: !model || policies.budgets.enforces(model, options, options.logger) };

  let result: AdmitResult;
  try {
    result = await policies.limitEngine.admit(key.id, limits, Date.now(), check);
  } catch (error) {
    return unavailable(context, limits, 'limit engine unavailable', error);
  }
  const headers = { ...rateLimitHeaders(result.requests, result.tokens), ...budgetHeaders(result.budgets) };
  if (result.allowed) return { limits, headers, slot: result.slot, counted: true, ...(budgets.length > 0 ? { budgets } : {}) };
  if (result.reason === 'quota') throw quotaExhausted(policies.quotaRetryAfterSeconds, headers);
  if (result.reason === 'budget') throw budgetExhausted(result.budgets ?? [], result.retryAfterMs, policies.quotaRetryAfterSeconds, headers);
  throw new GatewayError({
    status: 429,
    message: LIMIT_MESSAGES[result.reason],
    code: 'rate_limit_exceeded',
    headers: { ...headers, 'retry-after': retryAfterSeconds(result.retryAfterMs) },
  });
}

/** The engine (or a key's budget) failed: logged, then let through or refused as `policies.failOpen` says. */
function unavailable(context: RouteContext, limits: KeyLimits, what: string, error: unknown): Admission {
  const { options, requestId } = context;
  const { failOpen } = options.policies;
  options.logger.error(what, { requestId, failOpen, message: error instanceof Error ? error.message : String(error) });
  if (failOpen) return { limits, headers: {}, counted: false };
  throw new GatewayError({
    status: 503,
    message: 'Rate limits cannot be checked right now; try again shortly.',
    code: 'limits_unavailable',
    headers: { 'retry-after': '1' },
  });
}

const LIMIT_MESSAGES: Record<Exclude<LimitReason, 'quota' | 'budget'>, string> = {
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
