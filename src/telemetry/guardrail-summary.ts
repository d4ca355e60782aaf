import type { GuardrailOutcome } from '../guardrails/checker.js';

/**
 * One guardrail's outcome in one short string, `name:phase:outcome`, with `:categories` (comma
 * separated) when something was found: `pii:input:masked:email,phone`. For the access log, the
 * span and the request log, where a line per request must stay short. Never the matched text:
 * the outcome does not carry it.
 */
export function guardrailSummary(outcome: GuardrailOutcome): string {
  const head = `${outcome.guardrail}:${outcome.phase}:${outcome.outcome}`;
  return outcome.categories.length > 0 ? `${head}:${outcome.categories.join(',')}` : head;
}

/** Each outcome's summary, or undefined when no guardrail ran. */
export function guardrailSummaries(outcomes: readonly GuardrailOutcome[] | undefined): string[] | undefined {
  return outcomes && outcomes.length > 0 ? outcomes.map(guardrailSummary) : undefined;
}
