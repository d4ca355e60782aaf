import type { GuardrailOutcome } from './checker.js';

/** Most telling first: a stream's windows merge into the outcome of its most telling window. */
const SEVERITY: readonly GuardrailOutcome['outcome'][] = ['blocked', 'failed_closed', 'masked', 'flagged', 'failed_open', 'passed'];

/** Two checks of one guardrail and phase (two windows of a stream) as one outcome. */
export function mergeOutcomes(a: GuardrailOutcome, b: GuardrailOutcome): GuardrailOutcome {
  const outcome = SEVERITY.indexOf(a.outcome) <= SEVERITY.indexOf(b.outcome) ? a.outcome : b.outcome;
  return {
    guardrail: a.guardrail,
    phase: a.phase,
    action: a.action,
    outcome,
    categories: sortedUnique([...a.categories, ...b.categories]),
    findings: a.findings + b.findings,
    durationMs: a.durationMs + b.durationMs,
  };
}

export function sortedUnique(values: readonly string[]): string[] {
  return [...new Set(values)].sort();
}
