import type { IRUsage } from '../ir.js';
import { compactUsage, num, obj } from '../usage-fields.js';

/** The names OpenAI's two usage objects give the same counters: `prompt`/`completion` in Chat, `input`/`output` in Responses. */
export type OpenAIUsageNames = { input: 'prompt' | 'input'; output: 'completion' | 'output' };

/** An OpenAI usage object (cached tokens counted inside the input, as in the IR) → IR usage. */
export function fromOpenAIUsage(raw: unknown, names: OpenAIUsageNames): IRUsage {
  const usage = obj(raw);
  const input = obj(usage[`${names.input}_tokens_details`]);
  const output = obj(usage[`${names.output}_tokens_details`]);
  return compactUsage(
    {
      input: num(usage[`${names.input}_tokens`]),
      cachedRead: num(input.cached_tokens),
      cacheWrite: num(input.cache_write_tokens),
      output: num(usage[`${names.output}_tokens`]),
      reasoning: num(output.reasoning_tokens),
    },
    usage,
  );
}
