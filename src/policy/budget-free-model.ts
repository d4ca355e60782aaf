import type { PriceTable, TokenPrice } from '../pricing/model-price.js';
import type { Pricing } from '../pricing/pricing.js';
import type { Deployment } from '../routing/deployments.js';
import type { ModelEntry } from '../routing/model.js';
import type { ModelCharge } from './budget.js';

/** What of the gateway's runtime the check reads (not the runtime type: it imports the policies). */
export interface ChargeSources {
  catalog: { deployments(model: ModelEntry): readonly Deployment[] };
  pricing: Pick<Pricing, 'lookup'>;
}

/**
 * The model's charge over all its deployments, since admission does not know yet which one will
 * answer: one that charges makes it `priced`. Asks the same pricing the usage events use, so a
 * model is never blocked as priced and then counted at $0, or the other way round.
 */
export function modelCharge(model: ModelEntry, runtime: ChargeSources): ModelCharge {
  const each = deploymentCharges(model, runtime);
  return each.includes('priced') ? 'priced' : each.includes('unpriced') ? 'unpriced' : 'free';
}

/** What each of the model's deployments can cost: `free`, `priced`, or `unpriced` (no price known there). */
export function deploymentCharges(model: ModelEntry, runtime: ChargeSources): ModelCharge[] {
  return runtime.catalog.deployments(model).map((deployment) => {
    let table: PriceTable | undefined;
    try {
      table = runtime.pricing.lookup({ model: model.id, provider: deployment.provider, upstreamModel: deployment.upstreamModel })?.table;
    } catch {
      table = undefined;
    }
    const prices = table ? Object.values(table).filter((price): price is TokenPrice => price !== undefined) : [];
    return prices.some(charges) ? 'priced' : prices.length === 0 ? 'unpriced' : 'free';
  });
}

function charges(price: TokenPrice): boolean {
  if (typeof price === 'number') return price > 0;
  return price.base > 0 || price.tiers.some((tier) => tier.price > 0);
}
