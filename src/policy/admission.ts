import { GatewayError } from '../errors.js';
import type { RouteContext } from '../http/route.js';
import { withoutUndefined } from '../optional.js';
import { silentLogger } from '../logger.js';
import type { ModelEntry, ModelKind } from '../routing/model.js';
import { type BudgetAccount, isExhausted } from './budget.js';
import { budgetExhausted, budgetHeaders } from './budget-admission.js';
import type { Admission, AdmitResult, BudgetCheck, CounterState, KeyLimits, LimitReason } from './limit-engine.js';
import { budgetRetryAfterMs } from './memory-limit-engine.js';
import { AdmissionRefusal } from './admission-refusal.js';
import { reportRefusal } from './refusal.js';
import { retryAfterSeconds } from './retry-after.js';

/**
 * Whom a spent budget refuses: requests to `model` when it costs money; before the body names
 * the model, requests for a `kind` when every model of that kind the key may use would be
 * refused (when one would be served anyway, the budget waits for the model: `checkBudgetFor`).
 */
export type BudgetTarget = { model: ModelEntry } | { kind: ModelKind };

/**
 * The key's admission for a request to `model`. Taken before the body was read when the route
 * admits early (the gateway holds it in `context.admission`): then only a spent budget is judged
 * here, now that the model is known. Otherwise taken now.
 */
export async function admitRequest(context: RouteContext, model?: ModelEntry): Promise<Admission> {
  try {
    return await admitFor(context, model);
  } catch (error) {
    reportRefusal(context, error);
    throw error;
  }
}

async function admitFor(context: RouteContext, model: ModelEntry | undefined): Promise<Admission> {
  const held = context.admission;
  if (!held?.waiting) return admitKey(context, model ? { model } : undefined);
  if (model) {
    if (held.admission.budgets?.length) context.options.policies.budgets.refuseUnpriced(model, context.options, context.options.logger);
    checkBudgetFor(context, held.admission, model);
  }
  return held.claim();
}

/**
 * A spent budget refuses `model` (when it costs money) for a request admitted before its body:
 * the 429 the engine would have answered had it known the model.
 */
export function checkBudgetFor(context: RouteContext, admission: Admission, model: ModelEntry): void {
  const { options } = context;
  const spent = admission.unjudgedBudgets?.find(isExhausted);
  if (!spent || !options.policies.budgets.enforces(model, options, options.logger)) return;
  throw budgetExhausted(admission.unjudgedBudgets!, budgetRetryAfterMs(spent, Date.now()), options.policies.quotaRetryAfterSeconds, admission.headers);
}

/**
 * Checks the caller's balance and limits before any upstream call. Refusals are 429s in the
 * route's shape with `retry-after` (seconds until the request could pass) and `x-ratelimit-*`;
 * an exhausted balance, quota or dollar budget also says `insufficient_quota` and
 * `x-should-retry: false`, so SDKs stop retrying what only a top-up (or the budget's reset) fixes.
 * A spent budget refuses only models that cost money (see `BudgetTarget`; without one, any).
 */
export async function admitKey(context: RouteContext, target?: BudgetTarget): Promise<Admission> {
  const { key, options } = context;
  const { policies } = options;
  if (typeof key.balance === 'number' && key.balance <= 0) throw quotaExhausted('balance', policies.quotaRetryAfterSeconds, {});
  const limits = key.limits ? { ...policies.limits, ...withoutUndefined(key.limits) } : policies.limits;
  let budgets: readonly BudgetAccount[];
  try {
    budgets = policies.budgets.accountsOf(key);
    if (budgets.length > 0 && !policies.limitEngine.supportsBudgets) throw new TypeError('the limit engine does not keep dollar budgets (supportsBudgets)');
  } catch (error) {
    return unavailable(context, limits, 'budget cannot be enforced', error);
  }
  if (budgets.length > 0 && target && 'model' in target) policies.budgets.refuseUnpriced(target.model, options, options.logger);
  if (!hasLimits(limits) && budgets.length === 0) return { limits, headers: {}, counted: false };
  const check: BudgetCheck | undefined = budgets.length === 0 ? undefined : { accounts: budgets, enforce: budgetRefuses(context, target) };

  let result: AdmitResult;
  try {
    result = await policies.limitEngine.admit(key.id, limits, Date.now(), check);
  } catch (error) {
    return unavailable(context, limits, 'limit engine unavailable', error);
  }
  const headers = { ...rateLimitHeaders(result.requests, result.tokens), ...budgetHeaders(result.budgets) };
  if (result.allowed) {
    const unjudged = check && !check.enforce && target && 'kind' in target ? { unjudgedBudgets: result.budgets } : {};
    return { limits, headers, slot: result.slot, counted: true, ...(budgets.length > 0 ? { budgets } : {}), ...unjudged };
  }
  if (result.reason === 'quota') throw quotaExhausted('quota', policies.quotaRetryAfterSeconds, headers);
  if (result.reason === 'budget') throw budgetExhausted(result.budgets ?? [], result.retryAfterMs, policies.quotaRetryAfterSeconds, headers);
  throw limitReached(result.reason, result.retryAfterMs, headers);
}

function limitReached(reason: LimitReason, retryAfterMs: number, headers: Record<string, string>): GatewayError {
  return new AdmissionRefusal(reason, {
    status: 429,
    message: LIMIT_MESSAGES[reason as keyof typeof LIMIT_MESSAGES] ?? LIMIT_MESSAGES.requests,
    code: 'rate_limit_exceeded',
    headers: { ...headers, 'retry-after': retryAfterSeconds(retryAfterMs) },
  });
}

/**
 * Requests per minute and concurrency only, for requests that cost no tokens and no dollars
 * (token counts, usage reports, video downloads, stored responses): a spent balance, quota or
 * budget does not refuse them, and they count no tokens.
 */
export async function admitRequestsOnly(context: RouteContext): Promise<Admission> {
  const { key, options } = context;
  const { requestsPerMinute, concurrentRequests } = key.limits ? { ...options.policies.limits, ...withoutUndefined(key.limits) } : options.policies.limits;
  const limits: KeyLimits = withoutUndefined({ requestsPerMinute, concurrentRequests });
  if (!hasLimits(limits)) return { limits, headers: {}, counted: false };
  let result: AdmitResult;
  try {
    result = await options.policies.limitEngine.admit(key.id, limits, Date.now());
  } catch (error) {
    return unavailable(context, limits, 'limit engine unavailable', error);
  }
  const headers = rateLimitHeaders(result.requests, undefined);
  if (result.allowed) return { limits, headers, slot: result.slot, counted: true };
  throw limitReached(result.reason, result.retryAfterMs, headers);
}

/**
 * Whether a spent budget refuses the request: a model's when it costs money; a kind's when no
 * model of the kind the key may use would be served anyway (each asked quietly: none of them is
 * the request's model yet); without a target, always.
 */
function budgetRefuses(context: RouteContext, target: BudgetTarget | undefined): boolean {
  const { options, key } = context;
  if (!target) return true;
  if ('model' in target) return options.policies.budgets.enforces(target.model, options, options.logger);
  for (const entry of options.catalog.entries()) {
    if ((entry.kind ?? 'text') !== target.kind || !options.catalog.allows(key, entry)) continue;
    if (!options.policies.budgets.enforces(entry, options, silentLogger)) return false;
  }
  return true;
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

function quotaExhausted(reason: 'quota' | 'balance', retryAfter: number, headers: Record<string, string>): GatewayError {
  return new AdmissionRefusal(reason, {
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
