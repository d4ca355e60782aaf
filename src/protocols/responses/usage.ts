import type { Json } from '../../json.js';
import type { IRUsage } from '../ir.js';
import { fromOpenAIUsage } from '../openai/usage.js';

/** Responses usage ↔ IR (both count cached tokens inside the input). */
export function toResponsesUsage(usage: IRUsage): Json {
  const input = usage.input ?? 0;
  const output = usage.output ?? 0;
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: usage.cachedRead ?? 0, cache_write_tokens: usage.cacheWrite ?? 0 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: usage.reasoning ?? 0 },
    total_tokens: input + output,
  };
}

export const fromResponsesUsage = (raw: unknown): IRUsage => fromOpenAIUsage(raw, { input: 'input', output: 'output' });
