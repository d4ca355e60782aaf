import { basename } from 'node:path';
import { expect, it } from 'vitest';
import { describeRun, makeWorkspace, type CliRun, type Workspace } from './cli-harness.js';
import { describeUpstream, expectUpstreamSawToolResult, type AgentRig, type Cell, type UpstreamCell } from './scripted-upstream.js';

/** What a test asks its agent, given the cell's workspace. */
export type PromptFor = (workspace: Workspace) => string;

/** The README's demo: the file by name alone, which the local model resolves against the working directory the agent states. */
const BY_NAME: PromptFor = (workspace) => `read ${basename(workspace.secretPath)}`;

export interface AgentCells {
  /** What the agent does, in the tests' names: "reads a file with its Read tool and answers from it". */
  does: string;
  cells: readonly UpstreamCell[];
  /** Runs the agent in a cell (with the test's own prompt unless `promptFor`), checks its answer, returns the file's token. */
  run(cell: Cell, promptFor?: PromptFor): Promise<string>;
  /** The rig, started in `beforeAll`. */
  rig(): AgentRig;
  timeoutMs: number;
}

/**
 * The cells every agent runs: each upstream cell, passing only when the strict upstream also
 * received the token in a tool result; the local provider; and the README's demo on it, the file
 * asked for by name alone ("read secret.txt", no tool named).
 */
export function itRunsEveryCell({ does, cells, run, rig, timeoutMs }: AgentCells): void {
  it.each(cells)(
    `${does} (%s upstream)`,
    async (cell) => {
      const token = await run(cell);
      expectUpstreamSawToolResult(cell, rig().upstream[cell], token);
    },
    timeoutMs,
  );

  it(
    `${does} (local provider)`,
    async () => {
      await run('local');
    },
    timeoutMs,
  );

  it(
    'reads a file it is asked for by name alone, relative to its working directory (local provider)',
    async () => {
      await run('local', BY_NAME);
    },
    timeoutMs,
  );
}

/** A finished run in a cell: the workspace it ran in (removed, its token known) and the assertion message. */
export interface CellRun {
  run: CliRun;
  workspace: Workspace;
  /** What the CLI printed and what the cell's upstream received. */
  context: string;
}

/** Runs the agent (`start`) in a fresh workspace, removed afterwards; fails when the run timed out. */
export async function runInWorkspace(cell: Cell, rig: AgentRig, start: (workspace: Workspace) => Promise<CliRun>): Promise<CellRun> {
  const workspace = await makeWorkspace();
  let run: CliRun;
  try {
    run = await start(workspace);
  } finally {
    await workspace.remove();
  }
  const context = `${describeRun(run)}\n--- upstream\n${cell === 'local' ? 'the local provider' : describeUpstream(cell, rig.upstream[cell])}`;
  expect(run.timedOut, context).toBe(false);
  return { run, workspace, context };
}

/** A CLI's JSON output, or undefined when it printed something else (a crash, a usage message). */
export function jsonOutput(stdout: string): Record<string, any> | undefined {
  try {
    return JSON.parse(stdout);
  } catch {
    return undefined;
  }
}

/** A CLI's JSON-lines output (`--json`, `stream-json`): one object per line that holds one. */
export function jsonLines(stdout: string): Record<string, any>[] {
  return stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line));
}
