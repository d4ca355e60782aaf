import type { Json } from '../../json.js';
import type { IRUsage } from '../ir.js';
import { compactUsage, num, obj } from '../usage-fields.js';

/** Chat Completions usage ↔ IR (both count cached tokens inside the prompt). */
export function toChatUsage(usage: IRUsage): Json {
  const prompt = usage.input ?? 0;
  const completion = usage.output ?? 0;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: usage.cachedRead ?? 0, cache_write_tokens: usage.cacheWrite ?? 0 },
    completion_tokens_details: { reasoning_tokens: usage.reasoning ?? 0 },
  };
}

export function fromChatUsage(raw: unknown): IRUsage {
  const usage = obj(raw);
  const prompt = obj(usage.prompt_tokens_details);
  const completion = obj(usage.completion_tokens_details);
  return compactUsage(
    {
      input: num(usage.prompt_tokens),
      cachedRead: num(prompt.cached_tokens),
      cacheWrite: num(prompt.cache_write_tokens),
      output: num(usage.completion_tokens),
      reasoning: num(completion.reasoning_tokens),
    },
    usage,
  );
}
