import type { KeyRecord } from '../auth/key-store.js';
import type { Logger } from '../logger.js';
import type { ModelEntry } from '../routing/model.js';
import { type Budget, type BudgetAccount, checkBudget, checkGroupBudgets } from './budget.js';
import { type ChargeSources, deploymentCharges } from './budget-free-model.js';
import type { GatewayError } from '../errors.js';
import { AdmissionRefusal } from './admission-refusal.js';
import { echo } from '../http/echo.js';

const NO_ACCOUNTS: readonly BudgetAccount[] = Object.freeze([]);

/** Models logged as unpriced, remembered at most: ids can come from wildcard models. */
const MODELS_MAX = 10_000;

/**
 * What a key with a dollar budget gets for a model without a known price: `refuse` (the default:
 * a 403, since its usage would count $0 and no budget could ever stop it) or `allow` (served,
 * counted $0, and never blocked by a spent budget).
 */
export type UnpricedModels = 'refuse' | 'allow';

/**
 * Which budgets a request answers to: the key's own (`KeyRecord.budget`, else `policies.budget`)
 * and its group's (`policies.groupBudgets[group]`), and whether a spent one may block the model.
 */
export class BudgetPolicy {
  private readonly loggedModels = new Set<string>();

  constructor(
    private readonly defaultBudget: Budget | undefined,
    private readonly groupBudgets: Readonly<Record<string, Budget>>,
    private readonly unpriced: UnpricedModels = 'refuse',
  ) {}

  /** Validates `policies.budget`, `policies.groupBudgets` and `policies.unpricedModels`, naming the bad field. */
  static resolve(budget: unknown, groupBudgets: unknown, unpriced: unknown, where: string): BudgetPolicy {
    if (budget !== undefined) checkBudget(budget, `${where}.budget`);
    if (groupBudgets !== undefined) checkGroupBudgets(groupBudgets, `${where}.groupBudgets`);
    if (unpriced !== undefined && unpriced !== 'refuse' && unpriced !== 'allow') throw new TypeError(`${where}.unpricedModels must be "refuse" or "allow"`);
    return new BudgetPolicy(budget, groupBudgets ?? {}, unpriced);
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
   * Whether a spent budget refuses a request to the model: when it is priced (`Pricing` keeps the
   * catalog's answers, so this costs no catalog lookup per request). A free model never is
   * refused. One with a deployment whose price is unknown is refused whatever its budget under
   * `unpricedModels: "refuse"` (`refuseUnpriced`); under `"allow"` it is served and never
   * blocked, as a free one, logged once per model so the host can set its `price`.
   */
  enforces(model: ModelEntry, sources: ChargeSources, logger: Logger): boolean {
    const charges = deploymentCharges(model, sources);
    if (charges.includes('priced')) return true;
    if (!charges.includes('unpriced')) return false;
    if (this.unpriced === 'refuse') return true;
    this.logOnce(model, logger, 'model has no known price: budgets do not block it and its usage counts $0 (set the model\'s "price")');
    return false;
  }

  /**
   * Under `unpricedModels: "refuse"`, the 403 of a model with a deployment whose price is
   * unknown, for a key with a dollar budget: whatever it used would count $0, so no budget could
   * stop it (logged once per model).
   */
  refuseUnpriced(model: ModelEntry, sources: ChargeSources, logger: Logger): void {
    if (this.unpriced !== 'refuse' || !deploymentCharges(model, sources).includes('unpriced')) return;
    this.logOnce(
      model,
      logger,
      'model has no known price: refused to keys with a dollar budget (set the model\'s "price", or policies.unpricedModels: "allow")',
    );
    throw unpricedModelRefused(model.id);
  }

  private logOnce(model: ModelEntry, logger: Logger, message: string): void {
    if (this.loggedModels.has(model.id) || this.loggedModels.size >= MODELS_MAX) return;
    this.loggedModels.add(model.id);
    logger.warn(message, { model: model.id });
  }
}

/** The 403 of a model without a known price, to a key with a dollar budget. */
function unpricedModelRefused(modelId: string): GatewayError {
  return new AdmissionRefusal('unpriced', {
    status: 403,
    message:
      `The model \`${echo(modelId)}\` has no known price, so its cost cannot be counted against this API key's dollar budget; ` +
      'it is refused until the gateway sets its price.',
    param: 'model',
    code: 'model_unpriced',
  });
}
