import type { ModelEntry } from './model.js';

/**
 * Upstream models known to answer 400 to any reasoning option ("Unsupported parameter:
 * 'reasoning_effort'", "thinking is not supported"): OpenAI's GPT-4 and GPT-3.5 families and
 * Claude 3 before 3.7. A vendor prefix (`openai/gpt-4.1` on OpenRouter) is allowed.
 */
const NON_REASONING = /(^|\/)(gpt-4|gpt-3\.5|chatgpt-|claude-3-(?!7))/i;

/**
 * Whether reasoning options may go to this upstream model on a translated path. Claude Code
 * always asks for an effort and Codex for a reasoning summary; a model that cannot reason answers
 * the same without them, so they are left out rather than turned into a 400. `reasoning` on the
 * model's config overrides the guess from its name.
 */
export function takesReasoning(model: Pick<ModelEntry, 'reasoning'>, upstreamModel: string): boolean {
  return model.reasoning ?? !NON_REASONING.test(upstreamModel);
}
