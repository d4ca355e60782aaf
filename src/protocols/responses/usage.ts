import type { Json } from '../../json.js';
import type { IRUsage } from '../ir.js';
import { compactUsage, num, obj } from '../usage-fields.js';

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

export function fromResponsesUsage(raw: unknown): IRUsage {
  const usage = obj(raw);
  const input = obj(usage.input_tokens_details);
  const output = obj(usage.output_tokens_details);
  return compactUsage(
    {
      input: num(usage.input_tokens),
      cachedRead: num(input.cached_tokens),
      cacheWrite: num(input.cache_write_tokens),
      output: num(usage.output_tokens),
      reasoning: num(output.reasoning_tokens),
    },
    usage,
  );
}
