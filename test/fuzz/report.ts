import { budget } from './budget.js';
import type { RouteName } from './cases.js';
import type { KnownIssueLedger } from './known-issue-ledger.js';
import type { FuzzRunner } from './runner.js';

/** What the run prints at the end: cases per route and in all, outcomes, slowest cases, known issues. */
export function fuzzReport(runner: FuzzRunner, crashes: number, ledger: KnownIssueLedger): string {
  const corpus = runner.counts.get('corpus')!;
  const generated = runner.counts.get('generated')!;
  const routes = new Set<RouteName>([...corpus.keys(), ...generated.keys()]);
  const row = (route: string, a: string | number, b: string | number, c: string | number) =>
    `  ${route.padEnd(16)} ${String(a).padStart(6)} ${String(b).padStart(9)} ${String(c).padStart(7)}`;
  const rows = [...routes].sort().map((route) => {
    const fromCorpus = corpus.get(route) ?? 0;
    const fromGenerators = generated.get(route) ?? 0;
    return row(route, fromCorpus, fromGenerators, fromCorpus + fromGenerators);
  });
  const outcomes = [...runner.statuses.entries()].sort(([a], [b]) => String(a).localeCompare(String(b))).map(([status, count]) => `${status}×${count}`);
  const corpusTotal = runner.total('corpus');
  const generatedTotal = runner.total('generated');
  return [
    `fuzz: ${corpusTotal + generatedTotal} cases (corpus ${corpusTotal}, generated ${generatedTotal} of budget ${budget.runs}, seed ${budget.seed})`,
    row('route', 'corpus', 'generated', 'total'),
    ...rows,
    row('all', corpusTotal, generatedTotal, corpusTotal + generatedTotal),
    `  outcomes: ${outcomes.join(' ')}; gateway crashes ${crashes}`,
    `  slowest: ${runner.slowest.map(({ name, ms }) => `${ms} ms ${name}`).join('\n           ')}`,
    ...ledger.lines(),
  ].join('\n');
}
