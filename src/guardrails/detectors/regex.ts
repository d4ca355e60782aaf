import safeRegex from 'safe-regex2';
import type { GuardrailSpecOf } from '../guardrail-schema.js';
import { type DetectorRule, type LocalDetector, ruleDetector } from './pattern-detector.js';

/** Longest match a stream holds back for when the guardrail sets no `maxLength`. */
export const DEFAULT_REGEX_MAX_LENGTH = 256;

/**
 * A `regex` guardrail's detector. Each pattern is compiled once (with `g` added) and refused,
 * naming `patterns[i].pattern`, when it does not compile or can backtrack exponentially (nested
 * quantifiers, per safe-regex2): a client's text must never stall the event loop. Empty matches
 * are skipped. A match longer than `maxLength` is still masked, but a stream only holds back
 * `maxLength` characters, so a longer one can reach the client split across chunks.
 */
export function regexDetector(spec: Pick<GuardrailSpecOf<'regex'>, 'patterns' | 'maxLength'>): LocalDetector {
  const maxLength = spec.maxLength ?? DEFAULT_REGEX_MAX_LENGTH;
  const rules = spec.patterns.map((entry, index): DetectorRule => {
    let pattern: RegExp;
    try {
      pattern = new RegExp(entry.pattern, `${entry.flags ?? ''}g`);
    } catch (error) {
      const field = /flag/i.test((error as Error).message) ? 'flags' : 'pattern';
      throw new TypeError(`regex guardrail: patterns[${index}].${field} is not a valid regular expression: ${(error as Error).message}`);
    }
    if (!safeRegex(pattern)) {
      throw new TypeError(`regex guardrail: patterns[${index}].pattern can backtrack exponentially (nested quantifiers); rewrite it without them`);
    }
    return { category: entry.category, pattern, maxLength };
  });
  return ruleDetector(rules);
}
