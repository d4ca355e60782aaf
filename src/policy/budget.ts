/**
 * Dollar budgets: how much a key, or every key of a group together, may spend per period. The
 * limit engine keeps the spend per budget window; this file holds the shapes, their validation
 * and the window arithmetic both engines share.
 */

/**
 * `1d`, `7d`, `30d`: fixed windows of that many UTC days counted from the Unix epoch (a `1d`
 * budget resets at 00:00 UTC; `7d` windows start on a Thursday, as 1970-01-01 was one).
 * `month`: the calendar month, UTC. Leave it out for a lifetime budget that never resets.
 */
export type BudgetPeriod = '1d' | '7d' | '30d' | 'month';

export const BUDGET_PERIODS: readonly BudgetPeriod[] = ['1d', '7d', '30d', 'month'];

/** A key's (`KeyRecord.budget`), every key's (`policies.budget`) or a group's budget. */
export interface Budget {
  /** Dollars that may be spent per period. 0 allows only free models. */
  usd: number;
  /** When the spend starts again from 0. Default: never (a lifetime budget). */
  period?: BudgetPeriod | undefined;
}

/**
 * What a request to a model can cost before it is made: `free` (every deployment's price is
 * known and 0: a config `price` of zeros), `priced` (some deployment charges), `unpriced` (some
 * deployment has no known price, e.g. the `local` provider's models without a `price`).
 */
export type ModelCharge = 'free' | 'priced' | 'unpriced';

/** One budget as the limit engine sees it: whose spend it counts, how much, over which period. */
export interface BudgetAccount {
  /** The caller's key (by id), or the key's group (by name), whose keys share the spend. */
  scope: 'key' | 'group';
  /** The key id or the group name. */
  owner: string;
  usd: number;
  period?: BudgetPeriod | undefined;
}

/** Where a budget stands, for the admission decision and the `x-infergate-budget-*` headers. */
export interface BudgetState {
  account: BudgetAccount;
  /** Dollars spent in the current window. */
  spentUsd: number;
  /** ms since epoch when the window ends; undefined for a lifetime budget. */
  resetsAt: number | undefined;
}

/** The span of time one budget counter covers. */
export interface BudgetWindow {
  /** Names the window in counters' keys: `1d:20415`, `month:2026-11`, `lifetime`. */
  id: string;
  /** ms since epoch when it ends; undefined for a lifetime budget. */
  resetsAt: number | undefined;
}

const DAY_MS = 86_400_000;
const DAYS: Record<Exclude<BudgetPeriod, 'month'>, number> = { '1d': 1, '7d': 7, '30d': 30 };

/** The window of `period` that holds the instant `now`. */
export function budgetWindow(period: BudgetPeriod | undefined, now: number): BudgetWindow {
  if (period === undefined) return { id: 'lifetime', resetsAt: undefined };
  if (period === 'month') {
    const date = new Date(now);
    const year = date.getUTCFullYear();
    const month = date.getUTCMonth();
    return { id: `month:${year}-${String(month + 1).padStart(2, '0')}`, resetsAt: Date.UTC(year, month + 1, 1) };
  }
  const length = DAYS[period] * DAY_MS;
  const index = Math.floor(now / length);
  return { id: `${period}:${index}`, resetsAt: (index + 1) * length };
}

/**
 * Spend is counted in whole billionths of a dollar, so that counters add up exactly (integers in
 * Redis, the same sum from every process) and a token at $0.10 per million still counts.
 */
export const NANO_USD_PER_USD = 1_000_000_000;

/** Dollars as a counter's integer; anything not a finite positive amount is 0. */
export function toNanoUsd(usd: number): number {
  return Number.isFinite(usd) && usd > 0 ? Math.round(usd * NANO_USD_PER_USD) : 0;
}

/** Whether the budget leaves nothing to spend. */
export function isExhausted(state: BudgetState): boolean {
  return toNanoUsd(state.spentUsd) >= toNanoUsd(state.account.usd);
}

/** Dollars left, never below 0. */
export function remainingUsd(state: BudgetState): number {
  return Math.max(0, toNanoUsd(state.account.usd) - toNanoUsd(state.spentUsd)) / NANO_USD_PER_USD;
}

/**
 * Validates a budget (options, a key, a group or a custom key store's record), naming the bad
 * field: `options.keys[2].budget.period must be one of "1d", "7d", "30d", "month"`.
 */
export function checkBudget(budget: unknown, where: string): asserts budget is Budget {
  if (typeof budget !== 'object' || budget === null || Array.isArray(budget)) throw new TypeError(`${where} must be an object { usd, period? }`);
  for (const field of Object.keys(budget)) {
    if (field !== 'usd' && field !== 'period') throw new TypeError(`${where}.${field}: unknown field (allowed: usd, period)`);
  }
  const { usd, period } = budget as Record<string, unknown>;
  if (!(typeof usd === 'number' && Number.isFinite(usd) && usd >= 0)) throw new TypeError(`${where}.usd must be a number >= 0 (dollars)`);
  if (period !== undefined && !BUDGET_PERIODS.includes(period as BudgetPeriod)) {
    throw new TypeError(`${where}.period must be one of ${BUDGET_PERIODS.map((name) => `"${name}"`).join(', ')}, or left out for a lifetime budget`);
  }
}

/** Validates `policies.groupBudgets`: group name → budget. */
export function checkGroupBudgets(groups: unknown, where: string): asserts groups is Record<string, Budget> {
  if (typeof groups !== 'object' || groups === null || Array.isArray(groups)) throw new TypeError(`${where} must be an object of group names to budgets`);
  for (const [group, budget] of Object.entries(groups)) checkBudget(budget, `${where}.${group}`);
}
