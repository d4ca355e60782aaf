import type { GuardrailChecker, GuardrailFinding, TextVerdict } from '../checker.js';

/** One shape a detector looks for. */
export interface DetectorRule {
  readonly category: string;
  /** Has the `g` flag; linear on any text (bounded quantifiers, no nested ones). */
  readonly pattern: RegExp;
  /** A string every match contains: a text without it is not searched (a pattern with no literal head is slow to search). */
  readonly hint?: string | undefined;
  /** Longest text the pattern can match, in UTF-16 code units. */
  readonly maxLength: number;
  /**
   * For a value too long for a stream to hold back whole (`maxLength` is then not held): its
   * beginning, anchored at the end of the text (`$`, no `g`), so a stream holds from there until
   * the value is whole or cannot be one.
   */
  readonly opening?: RegExp | undefined;
  /**
   * After a check the shape alone cannot make (Luhn, mod 97): how much of the match is the value
   * (its length, or less when the pattern took in what follows), 0 when it is none.
   */
  readonly settle?: ((match: string) => number) | undefined;
}

/** A detector that runs in-process: synchronous, with a `scan` the stream window calls on pending text. */
export interface LocalDetector extends GuardrailChecker {
  check(texts: readonly string[]): readonly TextVerdict[];
  /** The findings of one text, sorted by start. */
  scan(text: string): readonly GuardrailFinding[];
  readonly maxFindingLength: number;
  holdFrom(text: string): number;
}

/**
 * `head` (the first characters of a value, as a regex) where a value may start: at the start of
 * the text, after a character outside `chars` (a character-class body), or after a `\n`, `\r` or
 * `\t` escape, since tool-call arguments and quoted code are JSON-escaped text; never on the
 * character a backslash escapes. The lookbehind comes after `head` so the engine can skip ahead
 * to where `head` matches instead of testing the lookbehind at every position.
 */
export function startingWith(chars: string, head: string): string {
  return String.raw`(?:${head})(?<=(?:^|[^${chars}\\]|\\[nrt])(?:${head}))`;
}

/** Every match of every rule in `text`, sorted by start (then longest first); empty matches are skipped. */
export function scanRules(rules: readonly DetectorRule[], text: string): GuardrailFinding[] {
  const findings: GuardrailFinding[] = [];
  for (const rule of rules) {
    if (rule.hint !== undefined && !text.includes(rule.hint)) continue;
    const pattern = rule.pattern;
    pattern.lastIndex = 0;
    let match: RegExpExecArray | null;
    while ((match = pattern.exec(text)) !== null) {
      const value = match[0];
      if (value.length === 0) {
        // An empty match would be found again at the same place: step over one character (a whole code point under `u`).
        pattern.lastIndex = match.index + (pattern.unicode && isSurrogatePairAt(text, match.index) ? 2 : 1);
        continue;
      }
      const length = rule.settle === undefined ? value.length : rule.settle(value);
      if (length === 0) continue;
      findings.push({ category: rule.category, start: match.index, end: match.index + length });
      // What the pattern took in beyond the value is read again.
      if (length < value.length) pattern.lastIndex = match.index + length;
    }
  }
  return findings.sort((a, b) => a.start - b.start || b.end - a.end);
}

function isSurrogatePairAt(text: string, index: number): boolean {
  const code = text.charCodeAt(index);
  return code >= 0xd800 && code <= 0xdbff && index + 1 < text.length;
}

/** A synchronous, maskable checker made of rules. */
export function ruleDetector(rules: readonly DetectorRule[]): LocalDetector {
  const maxFindingLength = rules.reduce((longest, rule) => (rule.opening ? longest : Math.max(longest, rule.maxLength)), 0);
  const openings = rules.flatMap((rule) => (rule.opening ? [rule.opening] : []));
  const scan = (text: string): GuardrailFinding[] => scanRules(rules, text);
  return {
    canMask: true,
    maxFindingLength,
    holdFrom: (text) => {
      let from = -1;
      for (const opening of openings) {
        const at = text.search(opening);
        if (at >= 0 && (from < 0 || at < from)) from = at;
      }
      return from;
    },
    scan,
    check: (texts) => texts.map((text) => ({ findings: scan(text) })),
  };
}

/**
 * The rules of the categories a guardrail asked for (all when it named none). An unknown name is
 * a configuration mistake: refused, naming it and the known ones.
 */
export function rulesOf(
  kind: string,
  all: readonly DetectorRule[],
  known: readonly string[],
  categories: readonly string[] | undefined,
): readonly DetectorRule[] {
  if (categories === undefined) return all;
  for (const name of categories) {
    if (!known.includes(name)) throw new TypeError(`${kind} guardrail: unknown category "${name}" (known: ${known.join(', ')})`);
  }
  return all.filter((rule) => categories.includes(rule.category));
}
