import { calcPrice } from '@pydantic/genai-prices';

/**
 * What genai-prices itself charges for these token counts, to check the gateway's dollars
 * against (its `input_tokens` includes cache tokens, as the gateway's usage does).
 */
export function catalogCost(providerId: string, model: string, usage: { input: number; output: number; cachedRead?: number; cacheWrite?: number }): number {
  const price = calcPrice(
    { input_tokens: usage.input, output_tokens: usage.output, cache_read_tokens: usage.cachedRead ?? 0, cache_write_tokens: usage.cacheWrite ?? 0 },
    model,
    { providerId },
  );
  if (!price) throw new Error(`genai-prices has no price for ${providerId}/${model}`);
  return price.total_price;
}
