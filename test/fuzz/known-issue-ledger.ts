import type { FuzzCase } from './cases.js';
import type { CorpusCase } from './corpus.js';
import { knownIssueOf, knownIssues } from './known-issues.js';
import type { LateProblem } from './runner.js';

/**
 * Decides which failures a known issue explains, and keeps count for the report. A corpus case
 * may fail only by the issue it is marked with; a generated case by any known issue.
 */
export class KnownIssueLedger {
  /** Corpus cases marked `knownIssue` that still fail that way, and those that pass now. */
  private readonly corpusStillFailing: string[] = [];
  private readonly corpusPassingNow: string[] = [];
  /** Generated cases explained, by issue id. */
  private readonly hits = new Map<string, { count: number; example: string }>();

  /** Whether a corpus case's result is acceptable: it passed, or failed by its marked issue. */
  acceptCorpus(testCase: CorpusCase, problems: readonly string[]): boolean {
    const where = `corpus/${testCase.file} "${testCase.name}"`;
    if (problems.length === 0) {
      if (testCase.knownIssue) this.corpusPassingNow.push(`${where}: marked knownIssue "${testCase.knownIssue}" but passes now; remove the mark`);
      return true;
    }
    if (testCase.knownIssue === undefined || knownIssueOf(testCase, problems)?.id !== testCase.knownIssue) return false;
    const first = problems[0]!;
    this.corpusStillFailing.push(`${where}: ${first.length > 160 ? `${first.slice(0, 160)}…` : first}`);
    return true;
  }

  /** Whether a known issue explains a failing generated case (it is then counted). */
  explainsGenerated(testCase: FuzzCase, problems: readonly string[]): boolean {
    const known = knownIssueOf(testCase, problems);
    if (!known) return false;
    const hits = this.hits.get(known.id) ?? { count: 0, example: testCase.name };
    this.hits.set(known.id, { ...hits, count: hits.count + 1 });
    return true;
  }

  /** Late failure logs no known issue explains, as messages naming their case. */
  unexplained(late: readonly LateProblem[]): string[] {
    const explained = ({ testCase, problem }: LateProblem): boolean => {
      if (!testCase) return false;
      if ('file' in testCase) return testCase.knownIssue !== undefined && knownIssueOf(testCase, [problem])?.id === testCase.knownIssue;
      return this.explainsGenerated(testCase, [problem]);
    };
    return late
      .filter((entry) => !explained(entry))
      .map(({ testCase, problem }) => `${problem}\n  after answering the case ${testCase ? JSON.stringify(testCase) : '(none named)'}`);
  }

  /** The report's section: loud, each issue with its fix and what it explained this run. */
  lines(): string[] {
    if (knownIssues.length === 0 && this.corpusPassingNow.length === 0) return ['known issues: none'];
    const lines = [`KNOWN ISSUES (${knownIssues.length}), reported and not failing the run, waiting for a fix outside the fuzzer's files:`];
    for (const issue of knownIssues) {
      const hits = this.hits.get(issue.id);
      lines.push(`  - [${issue.id}] ${issue.fix}`, `    generated cases it explained: ${hits ? `${hits.count}, e.g. "${hits.example}"` : 'none this run'}`);
    }
    if (this.corpusStillFailing.length > 0)
      lines.push('  corpus cases marked with it, still failing:', ...this.corpusStillFailing.map((line) => `    ${line}`));
    lines.push(...this.corpusPassingNow.map((line) => `  ! ${line}`));
    return lines;
  }
}
