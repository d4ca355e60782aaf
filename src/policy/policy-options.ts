import { withoutUndefined } from '../optional.js';
import type { Budget } from './budget.js';
import { BudgetPolicy, type UnpricedModels } from './budget-policy.js';
import type { UsageEvent } from './events.js';
import { DeploymentHealth } from './deployment-health.js';
import { DEFAULT_RETRY_POLICY, type ResolvedRetryPolicy, type RetryPolicy } from './fallback.js';
import type { KeyLimits, LimitEngine } from './limit-engine.js';
import { MemoryLimitEngine } from './memory-limit-engine.js';
import { PROMPT_CACHE_KEY_SCOPES, type PromptCacheKeyScope } from './prompt-cache-key.js';

export interface PolicyOptions {
  /** Limits of every key that does not set its own (`KeyRecord.limits` overrides them one by one). */
  limits?: KeyLimits | undefined;
  /**
   * Where limit counters live. Default: this process's memory. `RedisLimitEngine` from
   * `infergate/redis` makes several instances enforce one combined limit.
   */
  limitEngine?: LimitEngine | undefined;
  /**
   * What to do when the limit engine fails (e.g. Redis is down): `open` serves the request
   * unlimited, `closed` answers 503. Either way it is logged. Default `open`: an outage of the
   * counters should not become an outage of the gateway.
   */
  whenLimitsUnavailable?: 'open' | 'closed' | undefined;
  /**
   * The spend of a request, counted against `KeyLimits.quota` and passed to `KeyStore.charge`.
   * Default: input + output tokens (0 for an answer from the response cache, `event.cached`).
   */
  cost?: ((event: Omit<UsageEvent, 'cost'>) => number) | undefined;
  /** Retries and fallback between a model's deployments. */
  retry?: RetryPolicy | undefined;
  /** `retry-after` sent with `insufficient_quota`, in seconds. Default 3600. */
  quotaRetryAfterSeconds?: number | undefined;
  /**
   * The dollar budget of every key that does not set its own (`KeyRecord.budget`; `false` there
   * opts a key out), e.g. `{ usd: 5, period: '1d' }`. Default: none. See `Budget`.
   */
  budget?: Budget | undefined;
  /** Budgets each shared by all keys of a group (`KeyRecord.group`, `default` when unset), by group name. */
  groupBudgets?: Record<string, Budget> | undefined;
  /**
   * A model with no known price (no `price`, not in the catalog) asked for by a key with a dollar
   * budget: `refuse` answers 403 `model_unpriced`, since its usage would count $0 and the budget
   * could never stop it; `allow` serves it, counted $0 and never blocked. A `price` of zeros
   * marks a model free, which is always served. Default `refuse`.
   */
  unpricedModels?: UnpricedModels | undefined;
  /**
   * Whose upstream prompt cache a client's `prompt_cache_key` names: `key` (default), `group` or
   * `shared` (sent as written). See `PromptCacheKeyScope`.
   */
  promptCacheKey?: PromptCacheKeyScope | undefined;
}

export interface ResolvedPolicies {
  limits: KeyLimits;
  limitEngine: LimitEngine;
  failOpen: boolean;
  cost: (event: Omit<UsageEvent, 'cost'>) => number;
  retry: ResolvedRetryPolicy;
  health: DeploymentHealth;
  quotaRetryAfterSeconds: number;
  budgets: BudgetPolicy;
  promptCacheKey: PromptCacheKeyScope;
}

/** Tokens used; nothing for an answer from the response cache. */
const tokensSpent = (event: Omit<UsageEvent, 'cost'>): number => (event.cached ? 0 : (event.usage.input ?? 0) + (event.usage.output ?? 0));

export function resolvePolicies(options: PolicyOptions | undefined): ResolvedPolicies {
  const policies = options ?? {};
  if (typeof policies !== 'object') throw new TypeError('options.policies must be an object');
  const limits = policies.limits ?? {};
  checkLimits(limits, 'options.policies.limits');
  const retry = { ...DEFAULT_RETRY_POLICY, ...withoutUndefined(policies.retry ?? {}) };
  for (const [name, value] of Object.entries(retry)) {
    if (value !== undefined && (!Number.isInteger(value) || value < 0)) throw new TypeError(`options.policies.retry.${name} must be an integer >= 0`);
  }
  const when = policies.whenLimitsUnavailable ?? 'open';
  if (when !== 'open' && when !== 'closed') throw new TypeError('options.policies.whenLimitsUnavailable must be "open" or "closed"');
  if (policies.cost !== undefined && typeof policies.cost !== 'function') throw new TypeError('options.policies.cost must be a function');
  const engine = policies.limitEngine ?? new MemoryLimitEngine();
  if (typeof engine.admit !== 'function' || typeof engine.settle !== 'function') {
    throw new TypeError('options.policies.limitEngine must be a LimitEngine (admit, settle, spent)');
  }
  const budgets = BudgetPolicy.resolve(policies.budget, policies.groupBudgets, policies.unpricedModels, 'options.policies');
  if (budgets.configured && !engine.supportsBudgets) {
    throw new TypeError('options.policies.limitEngine does not keep dollar budgets (supportsBudgets), so policies.budget cannot be enforced');
  }
  const quotaRetryAfterSeconds = policies.quotaRetryAfterSeconds ?? 3600;
  if (!Number.isInteger(quotaRetryAfterSeconds) || quotaRetryAfterSeconds < 1)
    throw new TypeError('options.policies.quotaRetryAfterSeconds must be a positive integer');
  const promptCacheKey = policies.promptCacheKey ?? 'key';
  if (!PROMPT_CACHE_KEY_SCOPES.includes(promptCacheKey)) throw new TypeError('options.policies.promptCacheKey must be "key", "group" or "shared"');
  return {
    limits,
    limitEngine: engine,
    failOpen: when === 'open',
    cost: policies.cost ?? tokensSpent,
    retry,
    health: new DeploymentHealth(Math.max(1, retry.failuresBeforeCooldown), retry.cooldownMs),
    quotaRetryAfterSeconds,
    budgets,
    promptCacheKey,
  };
}

/** Validates a `KeyLimits` object (options or a key record), naming the bad field. */
export function checkLimits(limits: KeyLimits, where: string): void {
  if (typeof limits !== 'object' || limits === null) throw new TypeError(`${where} must be an object`);
  for (const name of ['requestsPerMinute', 'tokensPerMinute', 'concurrentRequests', 'quota'] as const) {
    const value = limits[name];
    if (value !== undefined && !(typeof value === 'number' && Number.isFinite(value) && value >= 0)) {
      throw new TypeError(`${where}.${name} must be a number >= 0`);
    }
  }
}
