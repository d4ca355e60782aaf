import type { IRUsage } from '../ir.js';
import { compactUsage, num, obj } from '../usage-fields.js';

/**
 * Bedrock Converse `usage` → IR. Bedrock counts cache reads and writes apart from `inputTokens`
 * (as Anthropic does), while the IR's `input` includes them; reasoning is inside `outputTokens`
 * and not broken out by any model.
 */
export function fromConverseUsage(raw: unknown): IRUsage {
  const usage = obj(raw);
  const input = num(usage.inputTokens);
  const cachedRead = num(usage.cacheReadInputTokens);
  const cacheWrite = num(usage.cacheWriteInputTokens);
  return compactUsage(
    {
      input: input === undefined ? undefined : input + (cachedRead ?? 0) + (cacheWrite ?? 0),
      cachedRead,
      cacheWrite,
      output: num(usage.outputTokens),
    },
    usage,
  );
}
