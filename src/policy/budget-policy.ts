import type { KeyRecord } from '../auth/key-store.js';
import type { Logger } from '../logger.js';
import type { ModelEntry } from '../routing/model.js';
import { type Budget, type BudgetAccount, checkBudget, checkGroupBudgets, type ModelCharge } from './budget.js';
import { type ChargeSources, modelCharge } from './budget-free-model.js';

const NO_ACCOUNTS: readonly BudgetAccount[] = Object.freeze([]);

/** Models remembered (logged, or their charge), at most: ids can come from wildcard models. */
const MODELS_MAX = 10_000;
/** How long a model's charge is reused: a catalog lookup costs ~0.1 ms, and prices change by the day. */
const CHARGE_TTL_MS = 60_000;

/**
 * Which budgets a request answers to: the key's own (`KeyRecord.budget`, else `policies.budget`)
 * and its group's (`policies.groupBudgets[group]`), and whether a spent one may block the model.
 */
export class BudgetPolicy {
  private readonly loggedModels = new Set<string>();
  private readonly charges = new Map<string, { charge: ModelCharge; until: number }>();

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
   * Whether a spent budget refuses a request to the model: only when it is priced (its charge is
   * reused for a minute). A free model never is refused; neither is an unpriced one, whose usage
   * is counted at $0: refusing it would lock users out of models the gateway cannot price
   * (logged once per model, so the host can price it).
   */
  enforces(model: ModelEntry, sources: ChargeSources, logger: Logger, now = Date.now()): boolean {
    const charge = this.chargeOf(model, sources, now);
    if (charge === 'priced') return true;
    if (charge === 'unpriced' && !this.loggedModels.has(model.id) && this.loggedModels.size < MODELS_MAX) {
      this.loggedModels.add(model.id);
      logger.warn('model has no known price: budgets do not block it and its usage counts $0 (set the model\'s "price")', { model: model.id });
    }
    return false;
  }

  private chargeOf(model: ModelEntry, sources: ChargeSources, now: number): ModelCharge {
    const known = this.charges.get(model.id);
    if (known && known.until > now) return known.charge;
    const charge = modelCharge(model, sources);
    if (this.charges.size >= MODELS_MAX) this.charges.clear();
    this.charges.set(model.id, { charge, until: now + CHARGE_TTL_MS });
    return charge;
  }
}
