import type { Json } from '../json.js';
import type { IRUsage } from './ir.js';

/** Helpers of the protocols' usage conversions (`<protocol>/usage.ts`); the IR counts cached tokens inside the input, as OpenAI does. */

export const num = (value: unknown): number | undefined => (typeof value === 'number' && Number.isFinite(value) ? value : undefined);
export const obj = (value: unknown): Json => (value && typeof value === 'object' ? (value as Json) : {});

/** Drops absent counters and keeps the upstream's object as `raw` (when it sent one). */
export function compactUsage(usage: Omit<IRUsage, 'raw'>, raw: Json): IRUsage {
  const out: IRUsage = {};
  for (const [key, value] of Object.entries(usage) as [keyof Omit<IRUsage, 'raw'>, number | undefined][]) {
    if (value !== undefined) out[key] = value;
  }
  if (Object.keys(raw).length > 0) out.raw = raw;
  return out;
}
