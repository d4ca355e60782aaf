import type { Pricing } from '../pricing/pricing.js';
import type { PriceTable, TokenPrice } from '../pricing/model-price.js';
import type { Deployment } from './deployments.js';
import type { ModelEntry } from './model.js';

/**
 * What one deployment of a model costs, for `x-infergate-route-order: price`: dollars per
 * million input plus output tokens (their base tier), or for a media model its unit prices
 * summed; undefined when the price is not known. Only the order matters, among deployments of
 * one model, which all bill the same kind of usage.
 */
export function deploymentPrice(pricing: Pricing, model: ModelEntry, deployment: Deployment): number | undefined {
  const price = pricing.lookup({ model: model.id, provider: deployment.provider, upstreamModel: deployment.upstreamModel });
  return price ? comparablePrice(price.table) : undefined;
}

function comparablePrice(table: PriceTable): number | undefined {
  const tokens = [table.input, table.output].filter((price) => price !== undefined);
  if (tokens.length > 0) return tokens.reduce((sum: number, price) => sum + basePrice(price), 0);
  const units = [table.image, table.videoSecond, table.speechCharacter, table.audioSecond].filter((price) => price !== undefined);
  return units.length > 0 ? units.reduce((sum, price) => sum + price, 0) : undefined;
}

function basePrice(price: TokenPrice): number {
  return typeof price === 'number' ? price : price.base;
}
