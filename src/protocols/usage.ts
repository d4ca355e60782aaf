import type { IRUsage } from './ir.js';
import type { Json } from '../json.js';

/**
 * Usage conversions between the IR (OpenAI semantics: prompt includes cache) and each protocol.
 * Anthropic's `input_tokens` excludes cache reads and writes, so converting is arithmetic, never
 * a copy: copying double-counts cached tokens.
 */

const num = (value: unknown): number | undefined => (typeof value === 'number' && Number.isFinite(value) ? value : undefined);
const obj = (value: unknown): Json => (value && typeof value === 'object' ? (value as Json) : {});

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

export function toMessagesUsage(usage: IRUsage): Json {
  const cachedRead = usage.cachedRead ?? 0;
  const cacheWrite = usage.cacheWrite ?? 0;
  return {
    input_tokens: Math.max(0, (usage.input ?? 0) - cachedRead - cacheWrite),
    cache_creation_input_tokens: cacheWrite,
    cache_read_input_tokens: cachedRead,
    output_tokens: usage.output ?? 0,
    // Anthropic's breakdown of output tokens (Claude Code shows it); only when the upstream said.
    ...(usage.reasoning !== undefined ? { output_tokens_details: { thinking_tokens: usage.reasoning } } : {}),
  };
}

export function fromChatUsage(raw: unknown): IRUsage {
  const usage = obj(raw);
  const prompt = obj(usage.prompt_tokens_details);
  const completion = obj(usage.completion_tokens_details);
  return compact(
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

export function fromResponsesUsage(raw: unknown): IRUsage {
  const usage = obj(raw);
  const input = obj(usage.input_tokens_details);
  const output = obj(usage.output_tokens_details);
  return compact(
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
  return compact(
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

/** Drops absent counters and keeps the upstream's object as `raw` (when it sent one). */
function compact(usage: Omit<IRUsage, 'raw'>, raw: Json): IRUsage {
  const out: IRUsage = {};
  for (const [key, value] of Object.entries(usage) as [keyof Omit<IRUsage, 'raw'>, number | undefined][]) {
    if (value !== undefined) out[key] = value;
  }
  if (Object.keys(raw).length > 0) out.raw = raw;
  return out;
}
