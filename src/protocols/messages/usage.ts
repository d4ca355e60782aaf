import type { Json } from '../../json.js';
import type { IRUsage } from '../ir.js';
import { compactUsage, num, obj } from '../usage-fields.js';

/**
 * Anthropic usage ↔ IR. Anthropic's `input_tokens` excludes cache reads and writes, so converting
 * is arithmetic, never a copy: copying double-counts cached tokens.
 */
export function toMessagesUsage(usage: IRUsage): Json {
  const cachedRead = usage.cachedRead ?? 0;
  const cacheWrite = usage.cacheWrite ?? 0;
  return {
    input_tokens: Math.max(0, (usage.input ?? 0) - cachedRead - cacheWrite),
    cache_creation_input_tokens: cacheWrite,
    cache_read_input_tokens: cachedRead,
    output_tokens: usage.output ?? 0,
    // Anthropic's breakdown of output tokens (Claude Code shows it); only when the upstream said.
    output_tokens_details: usage.reasoning === undefined ? undefined : { thinking_tokens: usage.reasoning },
  };
}

/**
 * Anthropic usage (cumulative counters; any may be absent in a `message_delta`). `input` is only
 * set when `input_tokens` is known, and then includes cache reads and writes.
 */
export function fromMessagesUsage(raw: unknown): IRUsage {
  const usage = obj(raw);
  const input = num(usage.input_tokens);
  const cachedRead = num(usage.cache_read_input_tokens);
  const cacheWrite = num(usage.cache_creation_input_tokens);
  const details = obj(usage.output_tokens_details);
  return compactUsage(
    {
      input: input === undefined ? undefined : input + (cachedRead ?? 0) + (cacheWrite ?? 0),
      cachedRead,
      cacheWrite,
      output: num(usage.output_tokens),
      reasoning: num(details.thinking_tokens),
    },
    usage,
  );
}
