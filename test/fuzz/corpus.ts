import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { FuzzCase } from './cases.js';
import { knownIssues } from './known-issues.js';
import { fuzzRoutes } from './routes.js';

const corpusDir = fileURLToPath(new URL('./corpus/', import.meta.url));

/** One corpus file: what it covers, and its cases. */
interface CorpusFile {
  about: string;
  cases: FuzzCase[];
}

export interface CorpusCase extends FuzzCase {
  /** The file it came from, for the report. */
  file: string;
}

/** Every case of `corpus/*.json`, checked for the fields the harness relies on. */
export function loadCorpus(): CorpusCase[] {
  const routes = new Set(fuzzRoutes.map((route) => route.name));
  const out: CorpusCase[] = [];
  for (const file of readdirSync(corpusDir)
    .filter((name) => name.endsWith('.json'))
    .sort()) {
    const parsed = JSON.parse(readFileSync(corpusDir + file, 'utf8')) as CorpusFile;
    if (typeof parsed.about !== 'string' || !Array.isArray(parsed.cases)) throw new Error(`corpus/${file}: expected { "about": string, "cases": [...] }`);
    const names = new Set<string>();
    for (const testCase of parsed.cases) {
      if (typeof testCase.name !== 'string' || names.has(testCase.name))
        throw new Error(`corpus/${file}: case names must be unique strings (${JSON.stringify(testCase.name)})`);
      if (!routes.has(testCase.route)) throw new Error(`corpus/${file}: case "${testCase.name}" has an unknown route ${JSON.stringify(testCase.route)}`);
      if (testCase.knownIssue !== undefined && !knownIssues.some((issue) => issue.id === testCase.knownIssue)) {
        throw new Error(`corpus/${file}: case "${testCase.name}" names no known issue of known-issues.ts (${JSON.stringify(testCase.knownIssue)})`);
      }
      names.add(testCase.name);
      out.push({ ...testCase, file });
    }
  }
  return out;
}
