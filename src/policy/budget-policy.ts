import type { KeyRecord } from '../auth/key-store.js';
import type { Logger } from '../logger.js';
import type { ModelEntry } from '../routing/model.js';
import { type Budget, type BudgetAccount, checkBudget, checkGroupBudgets } from './budget.js';
import { type ChargeSources, modelCharge } from './budget-free-model.js';

const NO_ACCOUNTS: readonly BudgetAccount[] = Object.freeze([]);

/** Models logged as unpriced, remembered at most: ids can come from wildcard models. */
const MODELS_MAX = 10_000;

/**
 * Which budgets a request answers to: the key's own (`KeyRecord.budget`, else `policies.budget`)
 * and its group's (`policies.groupBudgets[group]`), and whether a spent one may block the model.
 */
export class BudgetPolicy {
  private readonly loggedModels = new Set<string>();

  constructor(
    private readonly defaultBudget: Budget | undefined,
    private readonly groupBudgets: Readonly<Record<string, Budget>>,
  ) {}

  /** Validates `policies.budget` and `policies.groupBudgets`, naming the bad field. */
  static resolve(budget: unknown, groupBudgets: unknown, where: string): BudgetPolicy {
    if (budget !== undefined) checkBudget(budget, `${where}.budget`);
    if (groupBudgets !== undefined) checkGroupBudgets(groupBudgets, `${where}.groupBudgets`);
    return new BudgetPolicy(budget, groupBudgets ?? {});
  }

  /** Whether any budget is set in the options (a key store's records may still bring their own). */
  get configured(): boolean {
    return this.defaultBudget !== undefined || Object.keys(this.groupBudgets).length > 0;
  }

  /**
   * The key's budget, then its group's. `KeyRecord.budget: false` opts a key out of
   * `policies.budget`. A custom key store's malformed budget throws a `TypeError` naming it.
   */
  accountsOf(key: KeyRecord): readonly BudgetAccount[] {
    if (key.budget !== undefined && key.budget !== false) checkBudget(key.budget, `KeyRecord.budget of key ${key.id}`);
    const own = key.budget === false ? undefined : (key.budget ?? this.defaultBudget);
    const group = key.group ?? 'default';
    const shared = Object.hasOwn(this.groupBudgets, group) ? this.groupBudgets[group] : undefined;
    // Most gateways set no budget: their requests allocate nothing here.
    if (!own && !shared) return NO_ACCOUNTS;
    const accounts: BudgetAccount[] = [];
    if (own) accounts.push({ scope: 'key', owner: key.id, usd: own.usd, period: own.period });
    if (shared) accounts.push({ scope: 'group', owner: group, usd: shared.usd, period: shared.period });
    return accounts;
  }

  /**
   * Whether a spent budget refuses a request to the model: only when it is priced (`Pricing`
   * keeps the catalog's answers, so this costs no catalog lookup per request). A free model never
   * is refused; neither is an unpriced one, whose usage is counted at $0: refusing it would lock
   * users out of models the gateway cannot price (logged once per model, so the host can price it).
   */
  enforces(model: ModelEntry, sources: ChargeSources, logger: Logger): boolean {
    const charge = modelCharge(model, sources);
    if (charge === 'priced') return true;
    if (charge === 'unpriced' && !this.loggedModels.has(model.id) && this.loggedModels.size < MODELS_MAX) {
      this.loggedModels.add(model.id);
      logger.warn('model has no known price: budgets do not block it and its usage counts $0 (set the model\'s "price")', { model: model.id });
    }
    return false;
  }
}
