import type { IRUsage } from '../protocols/ir.js';
import type { UsageEvent } from '../policy/events.js';
import type { PriceTable, TokenPrice } from './model-price.js';

export type UsageUnits = NonNullable<UsageEvent['units']>;

/** Each media unit of a usage event and the price field that charges it. */
const unitPrices = [
  ['images', 'image'],
  ['videoSeconds', 'videoSecond'],
  ['characters', 'speechCharacter'],
  ['audioSeconds', 'audioSecond'],
] as const;

/**
 * Dollars for one request's usage under a price table. `usage.input` counts every prompt token,
 * cache reads and writes included (OpenAI semantics), and `usage.output` every generated token,
 * reasoning included: each token is charged once, at its own rate. A tiered price applies to the
 * whole request once its input tokens pass the tier's start (Gemini's and Anthropic's >200k rule).
 */
export function usageCost(table: PriceTable, usage: IRUsage, units: UsageUnits | undefined): number {
  const input = count(usage.input);
  const cachedRead = Math.min(count(usage.cachedRead), input);
  const cacheWrite = Math.min(count(usage.cacheWrite), input - cachedRead);
  const uncached = input - cachedRead - cacheWrite;
  const output = count(usage.output);
  const reasoning = table.reasoning === undefined ? 0 : Math.min(count(usage.reasoning), output);
  const rate = (price: TokenPrice | undefined) => perMillion(price, input);
  const tokens =
    uncached * rate(table.input) +
    cachedRead * rate(table.cacheRead ?? table.input) +
    cacheWrite * rate(table.cacheWrite ?? table.input) +
    (output - reasoning) * rate(table.output) +
    reasoning * rate(table.reasoning);
  let media = 0;
  for (const [unit, field] of unitPrices) media += count(units?.[unit]) * (table[field] ?? 0);
  return roundUsd(tokens / 1_000_000 + media);
}

/** Dollars to twelve decimals: below a millionth of a cent, and no 0.30000000000000004 in logs or answers. */
export function roundUsd(usd: number): number {
  return Math.round(usd * 1e12) / 1e12;
}

/**
 * Whether the table prices what the usage has to bill: a table with token prices only says
 * nothing of a video's seconds, and charging those 0 under the catalog's name would hide that.
 */
export function pricesUsage(table: PriceTable, usage: IRUsage, units: UsageUnits | undefined): boolean {
  const tokens = count(usage.input) + count(usage.output) > 0;
  if (tokens && (table.input !== undefined || table.output !== undefined)) return true;
  let usedUnits = false;
  for (const [unit, field] of unitPrices) {
    if (count(units?.[unit]) === 0) continue;
    if (table[field] !== undefined) return true;
    usedUnits = true;
  }
  return !tokens && !usedUnits;
}

function perMillion(price: TokenPrice | undefined, inputTokens: number): number {
  if (price === undefined) return 0;
  if (typeof price === 'number') return price;
  let rate = price.base;
  for (const tier of price.tiers) if (inputTokens > tier.start) rate = tier.price;
  return rate;
}

function count(value: number | undefined): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0;
}
