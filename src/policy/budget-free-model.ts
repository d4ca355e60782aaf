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
  let charge: ModelCharge = 'free';
  for (const deployment of runtime.catalog.deployments(model)) {
    let table: PriceTable | undefined;
    try {
      table = runtime.pricing.lookup({ model: model.id, provider: deployment.provider, upstreamModel: deployment.upstreamModel })?.table;
    } catch {
      table = undefined;
    }
    const prices = table ? Object.values(table).filter((price): price is TokenPrice => price !== undefined) : [];
    if (prices.some(charges)) return 'priced';
    if (prices.length === 0) charge = 'unpriced';
  }
  return charge;
}

function charges(price: TokenPrice): boolean {
  if (typeof price === 'number') return price > 0;
  return price.base > 0 || price.tiers.some((tier) => tier.price > 0);
}
