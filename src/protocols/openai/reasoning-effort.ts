import type { IRRequest } from '../ir.js';

/**
 * A thinking budget (Anthropic clients) becomes the nearest effort; the thresholds mirror the
 * budgets the Messages encoder uses for each effort.
 */
export function reasoningEffort(reasoning: IRRequest['reasoning']): string | undefined {
  if (!reasoning) return undefined;
  if (reasoning.effort !== undefined) return reasoning.effort;
  const budget = reasoning.budgetTokens;
  if (budget === undefined) return undefined;
  if (budget <= 2048) return 'low';
  if (budget <= 8192) return 'medium';
  return 'high';
}
