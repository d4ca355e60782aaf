import type { BudgetAccount, BudgetState } from './budget.js';

/**
 * Per-key limits and their counters. The gateway asks the engine before every upstream call
 * (`admit`) and tells it what the request used once it ends (`settle`). The memory engine serves
 * one process; `RedisLimitEngine` from `infergate/redis` makes several processes enforce one
 * combined limit. Both also keep dollar budgets (`budget.ts`).
 */

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
  /**
   * Where the budgets stood, when a spent one could not refuse yet: admitted before the body
   * named its model, which `checkBudgetFor` then judges.
   */
  unjudgedBudgets?: readonly BudgetState[] | undefined;
}

/** Limits of one key: on its `KeyRecord.limits`, or the defaults in `options.policies.limits`. */
export interface KeyLimits {
  /** Requests admitted per window (a minute by default). */
  requestsPerMinute?: number | undefined;
  /** Tokens (input + output) used per window; checked before, counted after each request. */
  tokensPerMinute?: number | undefined;
  /** Requests in flight at once (a stream counts until it ends). */
  concurrentRequests?: number | undefined;
  /**
   * Total spend allowed, in the units of `options.policies.cost` (tokens by default), counted by
   * the engine. For a balance the key store owns, set `KeyRecord.balance` instead.
   */
  quota?: number | undefined;
}

/** Where one counter stands, for the `x-ratelimit-*` headers. */
export interface CounterState {
  limit: number;
  remaining: number;
  /** ms until the counter's window resets. */
  resetMs: number;
}

export type LimitReason = 'requests' | 'tokens' | 'concurrency' | 'quota' | 'budget';

export type AdmitResult =
  | {
      allowed: true;
      /** Concurrency slot taken (when `concurrentRequests` is set); give it back to `settle`. */
      slot?: string | undefined;
      requests?: CounterState | undefined;
      tokens?: CounterState | undefined;
      /** Where each budget asked about stands, in the order asked. */
      budgets?: BudgetState[] | undefined;
    }
  | {
      allowed: false;
      reason: LimitReason;
      /** ms until the request could be admitted (0 when unknown, e.g. quota or a lifetime budget). */
      retryAfterMs: number;
      requests?: CounterState | undefined;
      tokens?: CounterState | undefined;
      budgets?: BudgetState[] | undefined;
    };

/** The budgets `admit` reads: refused (reason `budget`) when one is spent and `enforce` is set. */
export interface BudgetCheck {
  accounts: readonly BudgetAccount[];
  /** False for a request that costs nothing (a free model): the states are read, nothing refused. */
  enforce: boolean;
}

export interface Settlement {
  /** The slot `admit` returned, released now. */
  slot?: string | undefined;
  /** Tokens to count against `tokensPerMinute`. */
  tokens: number;
  /** Spend to count against `quota`. */
  cost: number;
  /** Dollars to add to each of `budgets`, in the window of the settlement's time. */
  usd?: number | undefined;
  budgets?: readonly BudgetAccount[] | undefined;
}

export interface LimitEngine {
  /**
   * Checks the budgets and every limit set in `limits` and, when all pass, counts the request
   * and takes a concurrency slot, atomically. Nothing is counted for a refused request.
   */
  admit(keyId: string, limits: KeyLimits, now: number, budgets?: BudgetCheck): Promise<AdmitResult>;
  /** Releases the slot and counts tokens, spend and dollars. */
  settle(keyId: string, limits: KeyLimits, settlement: Settlement, now: number): Promise<void>;
  /** Spend counted so far against `quota` (for hosts and tests). */
  spent(keyId: string): Promise<number>;
  /**
   * Set by engines that keep dollar budgets (both built-in ones). The gateway refuses to rely
   * on an engine without it for a budget, rather than let the budget go silently unenforced.
   */
  readonly supportsBudgets?: boolean | undefined;
  /** Dollars spent in the budget's window of `now` (for hosts and tests). */
  budgetSpent?(account: BudgetAccount, now: number): Promise<number>;
  close?(): Promise<void>;
}

export interface LimitEngineOptions {
  /** Length of the rate windows in ms. Default 60,000 (per minute); shorter mostly for tests. */
  windowMs?: number | undefined;
  /**
   * A concurrency slot is dropped after this long even if never released (a crashed process),
   * in ms. Default 15 minutes: longer than any sane stream.
   */
  slotTtlMs?: number | undefined;
}
