import type { Json } from '../../json.js';
import type { IRUsage } from '../ir.js';
import { fromOpenAIUsage } from '../openai/usage.js';

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

export const fromChatUsage = (raw: unknown): IRUsage => fromOpenAIUsage(raw, { input: 'prompt', output: 'completion' });
