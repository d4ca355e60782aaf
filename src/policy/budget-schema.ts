import * as v from 'valibot';
import { nonNegativeNumber, strictObject } from '../config-fields.js';
import { BUDGET_PERIODS } from './budget.js';

/** A budget in the config file (see `Budget`): `{ "usd": 5, "period": "1d" }`. */
export const BudgetSchema = strictObject({
  usd: nonNegativeNumber,
  period: v.optional(
    v.picklist(BUDGET_PERIODS, `expected one of ${BUDGET_PERIODS.map((name) => `"${name}"`).join(', ')} (leave it out for a lifetime budget)`),
  ),
});

/** A key's budget: a budget, or `false` for none even when `policies.budget` is set. */
export const KeyBudgetSchema = v.union([v.literal(false), BudgetSchema], 'expected { "usd": …, "period"?: … } or false');

/** `policies.groupBudgets`: group name → budget. */
export const GroupBudgetsSchema = v.record(v.string(), BudgetSchema, 'expected an object of group names to budgets');
