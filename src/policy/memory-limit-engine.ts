import type { Defaulted } from '../optional.js';
import { type BudgetAccount, type BudgetState, budgetWindow, isExhausted, NANO_USD_PER_USD, toNanoUsd } from './budget.js';
import type { AdmitResult, BudgetCheck, CounterState, KeyLimits, LimitEngine, LimitEngineOptions, LimitReason, Settlement } from './limit-engine.js';

/** Counters of one key id: the current rate window, the live slots and the spend. */
interface KeyCounters {
  /** Index of the window `requests` and `tokens` belong to (`floor(now / windowMs)`). */
  window: number;
  requests: number;
  tokens: number;
  /** Slot id → when it expires (ms). */
  slots: Map<string, number>;
  spent: number;
}

/** Dollars spent on one budget in one window, in billionths (`toNanoUsd`). */
interface BudgetCounter {
  window: string;
  resetsAt: number | undefined;
  nanoUsd: number;
}

/**
 * Limit counters in this process's memory: the default engine, right for one gateway process.
 * Several processes each enforce their own limits with it; use `RedisLimitEngine` to share them.
 *
 * Every counter is kept whether or not its limit is set (requests at `admit`, tokens and spend at
 * `settle`), so a limit added mid-window applies to the traffic already seen, and `spent()`
 * reports spend without a quota. Only the current window is kept per key, and keys with nothing
 * left to remember (no spend, no live slot) are dropped once per window, so memory follows the
 * number of active keys. A dollar budget keeps one counter, of its current window (`budget.ts`),
 * from its first use; counters whose window has ended are dropped at the same sweep.
 */
export class MemoryLimitEngine implements LimitEngine {
  private readonly windowMs: number;
  private readonly slotTtlMs: number;
  private readonly keys = new Map<string, KeyCounters>();
  private readonly budgets = new Map<string, BudgetCounter>();
  readonly supportsBudgets = true;
  private sweptWindow = -Infinity;
  private nextSlot = 0;

  constructor(options: LimitEngineOptions = {}) {
    ({ windowMs: this.windowMs, slotTtlMs: this.slotTtlMs } = resolveLimitEngineOptions(options, 'MemoryLimitEngine'));
  }

  async admit(keyId: string, limits: KeyLimits, now: number, check?: BudgetCheck): Promise<AdmitResult> {
    const counters = this.countersAt(keyId, now);
    const resetMs = (counters.window + 1) * this.windowMs - now;
    const budgets = check?.accounts.map((account) => this.budgetState(account, now));
    const refuse = (reason: LimitReason, retryAfterMs: number): AdmitResult => ({
      allowed: false,
      reason,
      retryAfterMs,
      ...counterStates(limits, counters.requests, counters.tokens, resetMs),
      ...(budgets ? { budgets } : {}),
    });

    const spentBudget = check?.enforce ? budgets?.find(isExhausted) : undefined;
    if (spentBudget) return refuse('budget', budgetRetryAfterMs(spentBudget, now));
    if (limits.quota !== undefined && counters.spent >= limits.quota) return refuse('quota', 0);
    if (limits.concurrentRequests !== undefined) {
      pruneSlots(counters, now);
      if (counters.slots.size >= limits.concurrentRequests) return refuse('concurrency', CONCURRENCY_RETRY_AFTER_MS);
    }
    if (limits.requestsPerMinute !== undefined && counters.requests >= limits.requestsPerMinute) return refuse('requests', resetMs);
    if (limits.tokensPerMinute !== undefined && counters.tokens >= limits.tokensPerMinute) return refuse('tokens', resetMs);

    counters.requests += 1;
    let slot: string | undefined;
    if (limits.concurrentRequests !== undefined) {
      slot = `slot_${++this.nextSlot}`;
      counters.slots.set(slot, now + this.slotTtlMs);
    }
    return { allowed: true, slot, ...counterStates(limits, counters.requests, counters.tokens, resetMs), ...(budgets ? { budgets } : {}) };
  }

  async settle(keyId: string, _limits: KeyLimits, settlement: Settlement, now: number): Promise<void> {
    const counters = this.countersAt(keyId, now);
    if (settlement.slot) counters.slots.delete(settlement.slot);
    counters.tokens += Math.round(countable(settlement.tokens));
    counters.spent += countable(settlement.cost);
    const nanoUsd = toNanoUsd(settlement.usd ?? 0);
    if (nanoUsd > 0) for (const account of settlement.budgets ?? []) this.budgetAt(account, now).nanoUsd += nanoUsd;
  }

  async spent(keyId: string): Promise<number> {
    return this.keys.get(keyId)?.spent ?? 0;
  }

  async budgetSpent(account: BudgetAccount, now: number): Promise<number> {
    return this.budgetState(account, now).spentUsd;
  }

  private budgetState(account: BudgetAccount, now: number): BudgetState {
    const counter = this.budgetAt(account, now);
    return { account, spentUsd: counter.nanoUsd / NANO_USD_PER_USD, resetsAt: counter.resetsAt };
  }

  /** The budget's counter, rolled over to the window of `now`. */
  private budgetAt(account: BudgetAccount, now: number): BudgetCounter {
    const id = budgetCounterId(account);
    const window = budgetWindow(account.period, now);
    let counter = this.budgets.get(id);
    if (!counter) {
      counter = { window: window.id, resetsAt: window.resetsAt, nanoUsd: 0 };
      this.budgets.set(id, counter);
    } else if (counter.window !== window.id && (window.resetsAt ?? 0) > (counter.resetsAt ?? 0)) {
      // Only forward: a clock stepping back keeps the newer window's spend.
      Object.assign(counter, { window: window.id, resetsAt: window.resetsAt, nanoUsd: 0 });
    }
    return counter;
  }

  /** The key's counters, rolled over to the window of `now`. */
  private countersAt(keyId: string, now: number): KeyCounters {
    const window = Math.floor(now / this.windowMs);
    if (window > this.sweptWindow) this.sweep(window, now);
    let counters = this.keys.get(keyId);
    if (!counters) {
      counters = { window, requests: 0, tokens: 0, slots: new Map(), spent: 0 };
      this.keys.set(keyId, counters);
    } else if (window > counters.window) {
      // A clock stepping back keeps the newer window rather than resetting it twice.
      counters.window = window;
      counters.requests = 0;
      counters.tokens = 0;
    }
    return counters;
  }

  /** Once per window: drops keys whose counters are all back to nothing. */
  private sweep(window: number, now: number): void {
    this.sweptWindow = window;
    for (const [keyId, counters] of this.keys) {
      pruneSlots(counters, now);
      if (counters.window < window && counters.spent === 0 && counters.slots.size === 0) this.keys.delete(keyId);
    }
    for (const [id, counter] of this.budgets) if (counter.resetsAt !== undefined && counter.resetsAt <= now) this.budgets.delete(id);
  }
}

/** One counter per budget owner and period: a period changed in the config starts a new one. */
function budgetCounterId(account: BudgetAccount): string {
  return `${account.scope}\0${account.owner}\0${account.period ?? 'lifetime'}`;
}

function pruneSlots(counters: KeyCounters, now: number): void {
  for (const [slot, expiresAt] of counters.slots) if (expiresAt <= now) counters.slots.delete(slot);
}

/*
 * Shared by both engines, so their answers cannot drift apart. They live here because the
 * memory engine is the reference one; `limit-engine.ts` holds only the contract.
 */

/** A refused concurrency slot frees when some request ends, and when is unknown: retry soon. */
export const CONCURRENCY_RETRY_AFTER_MS = 1000;

/** Options with defaults applied, checked at construction. */
export function resolveLimitEngineOptions(options: LimitEngineOptions, engine: string): Defaulted<LimitEngineOptions> {
  const windowMs = options.windowMs ?? 60_000;
  const slotTtlMs = options.slotTtlMs ?? 15 * 60_000;
  if (!Number.isInteger(windowMs) || windowMs < 1) throw new TypeError(`${engine}: windowMs must be a positive integer (ms)`);
  if (!Number.isInteger(slotTtlMs) || slotTtlMs < 1) throw new TypeError(`${engine}: slotTtlMs must be a positive integer (ms)`);
  return { windowMs, slotTtlMs };
}

/** `x-ratelimit-*` states of the rate limits that are set. */
export function counterStates(
  limits: KeyLimits,
  requests: number,
  tokens: number,
  resetMs: number,
): { requests: CounterState | undefined; tokens: CounterState | undefined } {
  const state = (limit: number, used: number): CounterState => ({ limit, remaining: Math.max(0, limit - used), resetMs });
  return {
    requests: limits.requestsPerMinute === undefined ? undefined : state(limits.requestsPerMinute, requests),
    tokens: limits.tokensPerMinute === undefined ? undefined : state(limits.tokensPerMinute, tokens),
  };
}

/** A spent budget frees when its window ends; a lifetime one never does (0: unknown). */
export function budgetRetryAfterMs(state: BudgetState, now: number): number {
  return state.resetsAt === undefined ? 0 : Math.max(0, state.resetsAt - now);
}

/** Usage worth counting: a finite positive amount; anything else (missing, NaN, a refund) is 0. */
export function countable(amount: number): number {
  return Number.isFinite(amount) && amount > 0 ? amount : 0;
}
