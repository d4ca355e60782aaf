import type { Json } from '../../json.js';
import type { IRUsage } from '../ir.js';
import { compactUsage, num, obj } from '../usage-fields.js';

/**
 * Gemini `usageMetadata` ↔ IR. Gemini counts the cached prompt inside `promptTokenCount` (as the
 * IR does) but keeps the thinking out of `candidatesTokenCount` (`thoughtsTokenCount` apart),
 * while the IR's `output` includes reasoning; the prompt of server-side tools
 * (`toolUsePromptTokenCount`) is prompt the request pays for.
 */
export function fromGeminiUsage(raw: unknown): IRUsage {
  const usage = obj(raw);
  const prompt = num(usage.promptTokenCount);
  const toolPrompt = num(usage.toolUsePromptTokenCount);
  const candidates = num(usage.candidatesTokenCount);
  const thoughts = num(usage.thoughtsTokenCount);
  const anyOutput = candidates !== undefined || thoughts !== undefined;
  return compactUsage(
    {
      input: prompt === undefined ? undefined : prompt + (toolPrompt ?? 0),
      cachedRead: num(usage.cachedContentTokenCount),
      output: anyOutput ? (candidates ?? 0) + (thoughts ?? 0) : undefined,
      reasoning: thoughts,
    },
    usage,
  );
}

/** IR usage → `usageMetadata` as a Gemini client reads it (counters the IR does not know are left out). */
export function toGeminiUsage(usage: IRUsage): Json {
  const prompt = usage.input ?? 0;
  const output = usage.output ?? 0;
  const thoughts = usage.reasoning ?? 0;
  const out: Json = {
    promptTokenCount: prompt,
    candidatesTokenCount: Math.max(0, output - thoughts),
    totalTokenCount: prompt + output,
  };
  if (usage.cachedRead !== undefined) out.cachedContentTokenCount = usage.cachedRead;
  if (usage.reasoning !== undefined) out.thoughtsTokenCount = thoughts;
  return out;
}
