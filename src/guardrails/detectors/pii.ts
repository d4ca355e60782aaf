import type { GuardrailSpecOf } from '../guardrail-schema.js';
import { ibanPrefixLength } from './iban.js';
import { passesLuhn } from './luhn.js';
import { type DetectorRule, type LocalDetector, ruleDetector, rulesOf, startingWith } from './pattern-detector.js';

/*
 * Personal data with a recognisable shape. Each pattern is linear: a lookbehind keeps it from
 * starting again inside a run it already read, and every quantifier is bounded. Plain numbers
 * (years, token counts, timestamps, ids) are left alone: phone numbers need a `+` or the
 * separators people write, cards a card-network first digit and the Luhn check, IBANs their
 * country's length and mod 97.
 */

/** What `categories` of a `pii` guardrail may name. */
export const PII_CATEGORIES = ['email', 'phone', 'card', 'iban', 'us_ssn'] as const;

export type PiiCategory = (typeof PII_CATEGORIES)[number];

const rule = (category: PiiCategory, source: string, maxLength: number, settle?: (match: string) => number): DetectorRule => ({
  category,
  pattern: new RegExp(source, 'g'),
  maxLength,
  settle,
});

/** What may follow a phone number: not more of a word, a number or a decimal. */
const PHONE_END = String.raw`(?![\w-]|[.]\d)`;

export const PII_RULES: readonly DetectorRule[] = [
  // Local part (RFC 5321: at most 64) @ up to 5 labels and a top-level domain of letters.
  {
    category: 'email',
    pattern: new RegExp(
      startingWith(String.raw`\w.%+-`, String.raw`[\w.%+-]`) + String.raw`[\w.%+-]{0,63}@(?:[A-Za-z0-9-]{1,63}\.){1,5}[A-Za-z]{2,24}(?![\w-])`,
      'g',
    ),
    hint: '@',
    maxLength: 64 + 1 + 5 * 64 + 24,
  },
  // International (+ country code, 8–15 digits in all, single spaces, dots or dashes between, an
  // optional area code in parentheses), North American (555) 123-4567 / 555-123-4567, and
  // trunk-prefixed national numbers of 9 digits or more written in groups (020 7946 0958,
  // 06 12 34 56 78, 030 1234 5678; a date such as 01.02.2024 has 8). None starts inside a number.
  // Longest: "+", 3 digits, " (1234)", 12 digits each after a separator.
  rule(
    'phone',
    startingWith(String.raw`\w+.-`, String.raw`\+`) + String.raw`(?<!\d \+)[1-9]\d{0,2}(?:[ .-]?\(\d{1,4}\))?(?:[ .-]?\d){7,12}${PHONE_END}`,
    1 + 3 + 7 + 24,
  ),
  rule(
    'phone',
    startingWith(String.raw`\w+.-`, String.raw`\(\d{3}\) ?|\d{3}[-. ]`) + String.raw`(?<!\d (?:\(\d{3}\) ?|\d{3}[-. ]))\d{3}[-. ]\d{4}${PHONE_END}`,
    14,
  ),
  rule('phone', startingWith(String.raw`\w+.-`, '0') + String.raw`(?<!\d 0)(?=(?:[ .-]?\d){8})[1-9]\d{0,3}(?:[ .-]\d{2,4}){2,4}${PHONE_END}`, 5 + 4 * 5),
  // 13–19 digits in groups of any size split by single spaces or dashes, starting with a
  // card-network digit (2–6: Mastercard, Amex, Visa, Discover…), passing the Luhn check.
  rule('card', startingWith(String.raw`\d-`, '[2-6]') + String.raw`(?<!\d [2-6])(?:[ -]?\d){12,18}(?![ -]?\d)`, 19 + 18, (match) =>
    passesLuhn(match) ? match.length : 0,
  ),
  // Country, check digits, then letters and digits, optionally in groups of four.
  rule('iban', startingWith('A-Za-z0-9', String.raw`[A-Z]{2}\d{2}`) + '(?: ?[A-Z0-9]){11,30}', 4 + 2 * 30, ibanPrefixLength),
  // Area-group-serial with dashes; never area 000, 666 or 9xx, group 00 or serial 0000.
  rule('us_ssn', startingWith(String.raw`\w-`, String.raw`\d{3}-`) + String.raw`(?<!(?:000|666|9\d\d)-)(?!00)\d{2}-(?!0000)\d{4}(?![\w-])`, 11),
];

/** A `pii` guardrail's detector: the shapes above, or those of `spec.categories`. */
export function piiDetector(spec: Pick<GuardrailSpecOf<'pii'>, 'categories'>): LocalDetector {
  return ruleDetector(rulesOf('pii', PII_RULES, PII_CATEGORIES, spec.categories));
}
