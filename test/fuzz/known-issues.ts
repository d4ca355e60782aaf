import type { FuzzCase } from './cases.js';

/**
 * Failures found by the fuzzer whose fix belongs in a file the fuzzer's authors may not change
 * (another engineer is rewriting it). A generated case that fails only this way is counted and
 * reported loudly at every run, not failed; corpus cases carry the same text in `knownIssue`.
 * Remove an entry once its fix lands: the run then says the issue no longer shows.
 */
export interface KnownIssue {
  id: string;
  /** What goes wrong, and the fix: file, place, change. */
  fix: string;
  /** Whether a failing case is this issue: its request, and every problem the oracle saw. */
  matches(testCase: FuzzCase, problems: readonly string[]): boolean;
}

export const knownIssues: readonly KnownIssue[] = [];

/** The known issue every problem of a failing case is explained by, if one is. */
export function knownIssueOf(testCase: FuzzCase, problems: readonly string[]): KnownIssue | undefined {
  return knownIssues.find((issue) => issue.matches(testCase, problems));
}
