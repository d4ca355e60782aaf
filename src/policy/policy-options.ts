import type { GuardrailPolicies } from '../guardrails/guardrail.js';
import { type Defaulted, withoutUndefined } from '../optional.js';
import type { Budget } from './budget.js';
import { BudgetPolicy, type UnpricedModels } from './budget-policy.js';
import type { UsageEvent } from './events.js';
import type { Logger } from '../logger.js';
import { DeploymentHealth } from './deployment-health.js';
import type { HealthBus } from './health-bus.js';
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
  /** How a deployment is chosen and when its circuit breaker opens (besides `retry`'s cooldown). */
  routing?: RoutingPolicy | undefined;
  /**
   * Shares deployment health (open breakers, 429 backoffs, closings) with other instances:
   * `RedisHealthBus` from `infergate/redis`, or `MemoryHealthBus` for gateways in one process.
   * Default: none, health is per process.
   */
  healthBus?: HealthBus | undefined;
  /** This gateway's id on `healthBus` (its own notices coming back are ignored). Default: a random UUID. */
  instanceId?: string | undefined;
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
  /** Every text request's guardrails (docs/policies.md, "Guardrails"); a model's and a key's follow. */
  guardrails?: GuardrailPolicies['guardrails'];
  /** Each key group's guardrails, after `guardrails`. */
  groupGuardrails?: GuardrailPolicies['groupGuardrails'];
}

export interface RoutingPolicy {
  /** Time constant of the peak-EWMA of time to first byte, in ms: how fast a slow deployment is forgiven. Default 10,000. */
  latencyDecayMs?: number | undefined;
  /** Longest an open breaker stays open (its open time doubles with each failed probe), in ms. Default 300,000. */
  maxOpenMs?: number | undefined;
  /** Recent error rate (0–1) from which a deployment is `degraded`: still chosen, scored worse. Default 0.25. */
  degradedErrorRate?: number | undefined;
}

export const DEFAULT_ROUTING_POLICY: Defaulted<RoutingPolicy> = {
  latencyDecayMs: 10_000,
  maxOpenMs: 300_000,
  degradedErrorRate: 0.25,
};

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

export function resolvePolicies(options: PolicyOptions | undefined, logger?: Logger): ResolvedPolicies {
  const policies = options ?? {};
  if (typeof policies !== 'object') throw new TypeError('options.policies must be an object');
  const limits = policies.limits ?? {};
  checkLimits(limits, 'options.policies.limits');
  const retry = { ...DEFAULT_RETRY_POLICY, ...withoutUndefined(policies.retry ?? {}) };
  for (const [name, value] of Object.entries(retry)) {
    if (value !== undefined && (!Number.isInteger(value) || value < 0)) throw new TypeError(`options.policies.retry.${name} must be an integer >= 0`);
  }
  const health = resolveHealth(policies, retry, logger);
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
    health,
    quotaRetryAfterSeconds,
    budgets,
    promptCacheKey,
  };
}

/** The deployments' health: `retry`'s cooldown is the breaker's first open time, `routing` the rest. */
function resolveHealth(policies: PolicyOptions, retry: ResolvedRetryPolicy, logger: Logger | undefined): DeploymentHealth {
  const routing = { ...DEFAULT_ROUTING_POLICY, ...withoutUndefined(policies.routing ?? {}) };
  if (!Number.isInteger(routing.latencyDecayMs) || routing.latencyDecayMs < 1)
    throw new TypeError('options.policies.routing.latencyDecayMs must be a positive integer');
  if (!Number.isInteger(routing.maxOpenMs) || routing.maxOpenMs < 0) throw new TypeError('options.policies.routing.maxOpenMs must be an integer >= 0');
  if (!(typeof routing.degradedErrorRate === 'number' && routing.degradedErrorRate > 0 && routing.degradedErrorRate <= 1)) {
    throw new TypeError('options.policies.routing.degradedErrorRate must be a number in (0, 1]');
  }
  const bus = policies.healthBus;
  if (bus !== undefined && (typeof bus?.publish !== 'function' || typeof bus.subscribe !== 'function')) {
    throw new TypeError('options.policies.healthBus must be a HealthBus (publish, subscribe)');
  }
  if (policies.instanceId !== undefined && (typeof policies.instanceId !== 'string' || policies.instanceId === '')) {
    throw new TypeError('options.policies.instanceId must be a non-empty string');
  }
  return new DeploymentHealth({
    failuresToOpen: Math.max(1, retry.failuresBeforeCooldown),
    openMs: retry.cooldownMs,
    maxOpenMs: Math.max(routing.maxOpenMs, retry.cooldownMs),
    degradedErrorRate: routing.degradedErrorRate,
    latencyDecayMs: routing.latencyDecayMs,
    bus,
    instanceId: policies.instanceId,
    logger,
  });
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
