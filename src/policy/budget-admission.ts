import type { GatewayError } from '../errors.js';
import { AdmissionRefusal } from './admission-refusal.js';
import { type BudgetState, isExhausted, remainingUsd } from './budget.js';
import { retryAfterSeconds } from './retry-after.js';

/**
 * The `x-infergate-budget-*` headers of a budgeted key's answers, for the budget with the least
 * left (the key's own or its group's): `-limit-usd`, `-remaining-usd` (as of admission: this
 * request's own cost is not known yet), `-reset` (when the window ends, an ISO 8601 UTC time;
 * absent for a lifetime budget) and `-scope` (`key` or `group`).
 */
export function budgetHeaders(states: readonly BudgetState[] | undefined): Record<string, string> {
  const tightest = tightestOf(states);
  if (!tightest) return {};
  return {
    'x-infergate-budget-limit-usd': formatUsd(tightest.account.usd),
    'x-infergate-budget-remaining-usd': formatUsd(remainingUsd(tightest)),
    ...(tightest.resetsAt !== undefined ? { 'x-infergate-budget-reset': new Date(tightest.resetsAt).toISOString() } : {}),
    'x-infergate-budget-scope': tightest.account.scope,
  };
}

/**
 * The 429 of a spent budget: `insufficient_quota` as for an exhausted quota, `x-should-retry:
 * false` (an SDK retrying within seconds cannot help), and `retry-after` the seconds until the
 * budget's window ends (`lifetimeRetryAfter` for a lifetime budget, which never does).
 */
export function budgetExhausted(
  states: readonly BudgetState[],
  retryAfterMs: number,
  lifetimeRetryAfter: number,
  headers: Record<string, string>,
): GatewayError {
  const spent = states.find(isExhausted);
  const whose = spent?.account.scope === 'group' ? `the group "${spent.account.owner}" of this API key has` : 'this API key has';
  const budget = spent
    ? `its budget of $${formatUsd(spent.account.usd)}${spent.account.period ? ` per ${PERIOD_NAMES[spent.account.period]}` : ''}`
    : 'its budget';
  const reset = spent?.resetsAt !== undefined ? `; it resets at ${new Date(spent.resetsAt).toISOString()}` : '';
  return new AdmissionRefusal('budget', {
    status: 429,
    type: 'insufficient_quota',
    message: `You exceeded your current quota: ${whose} spent ${budget}${reset}. Models that cost nothing are still served.`,
    code: 'insufficient_quota',
    headers: {
      ...headers,
      'retry-after': retryAfterMs > 0 ? retryAfterSeconds(retryAfterMs) : String(lifetimeRetryAfter),
      'x-should-retry': 'false',
    },
  });
}

const PERIOD_NAMES = { '1d': 'day (UTC)', '7d': '7 days', '30d': '30 days', month: 'calendar month (UTC)' } as const;

/** The budget with the least left; the key's own first on a tie (it is listed first). */
function tightestOf(states: readonly BudgetState[] | undefined): BudgetState | undefined {
  let tightest: BudgetState | undefined;
  for (const state of states ?? []) if (!tightest || remainingUsd(state) < remainingUsd(tightest)) tightest = state;
  return tightest;
}

/** Dollars to the billionth, without trailing zeros or exponents: `5`, `4.999976`, `0.0000001`. */
export function formatUsd(usd: number): string {
  return usd.toFixed(9).replace(/\.?0+$/, '');
}
