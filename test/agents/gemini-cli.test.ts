import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect } from 'vitest';
import { itRunsEveryCell, jsonOutput, runInWorkspace } from './agent-cells.js';
import { geminiCliEntry, runCli, type Workspace } from './cli-harness.js';
import { GATEWAY_KEY, startAgentRig, type AgentRig, type Cell } from './scripted-upstream.js';

/**
 * Gemini CLI (`gemini -p`, the real bundle run with this Node) through the gateway in each cell:
 * the scripted model calls Gemini CLI's own `read_file` tool on a file holding a random token,
 * Gemini CLI reads it and sends the result back as a `functionResponse`, and the model answers
 * with the token it found there. A cell passes only when that whole loop went through: the token
 * is in Gemini CLI's final answer, and the strict upstream accepted every request and received
 * the token in a tool result.
 */

/**
 * The models Gemini CLI asks the gateway for (0.61.0, seen at the gateway), one set per way a
 * user runs it:
 * - no `-m` (its default, `auto`): a routing classifier on `gemini-3.5-flash-lite`
 *   (`generateContent` asking for JSON of a `responseJsonSchema` with Google's upper-case types),
 *   then the main turns on `gemini-3.8-flash`, the model it routes a simple task to. A classifier
 *   that fails sends the turns to `gemini-3.1-pro-preview` instead, which the gateway does not
 *   serve: a broken classifier answer fails the cell rather than going unnoticed;
 * - `-m team-coder`, a name only the gateway knows: the main turns only, on that name.
 * It sends no countTokens, no model listing and no next-speaker check on these runs.
 */
const AUTO_MODELS = ['gemini-3.5-flash-lite', 'gemini-3.8-flash'];
const ROUTED_MODEL = 'team-coder';
/** A whole run (a routing call, two model turns and a file read) takes about three seconds; this bounds a hung one. */
const RUN_TIMEOUT_MS = 60_000;
const TEST_TIMEOUT_MS = RUN_TIMEOUT_MS + 15_000;

/**
 * `~/.gemini/settings.json` of each run: the gateway key as a Gemini API key, and everything that
 * would reach the internet off (usage statistics, telemetry, update checks, IDE integration).
 * With these, a run connects to the gateway only (checked with strace); without them it resolves
 * Google's hosts.
 */
const SETTINGS = {
  security: { auth: { selectedType: 'gemini-api-key' } },
  privacy: { usageStatisticsEnabled: false },
  telemetry: { enabled: false },
  general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
  ide: { enabled: false },
};

let rig: AgentRig;
beforeAll(async () => {
  geminiCliEntry(); // fails here, loudly, when the CLI is missing
  rig = await startAgentRig([...AUTO_MODELS, ROUTED_MODEL]);
});
afterAll(() => rig?.close());
beforeEach(() => {
  for (const fake of Object.values(rig.upstream)) fake.reset();
});

/** The prompt of most cells: the file by its absolute path. */
const ABSOLUTE = (workspace: Workspace) => `Use the read_file tool to read ${workspace.secretPath} and reply with the token it contains.`;

/** Runs `gemini -p` in a fresh home and work dir; checks its answer carries the file's token. */
async function expectGeminiCliReadsTheFile(cell: Cell, model: string | undefined, promptFor = ABSOLUTE): Promise<string> {
  const { run, workspace, context } = await runInWorkspace(cell, rig, async (workspace) => {
    await mkdir(join(workspace.home, '.gemini'));
    await writeFile(join(workspace.home, '.gemini', 'settings.json'), JSON.stringify(SETTINGS));
    // Its error reports go to the temp dir: the workspace's, removed with it.
    const tmp = join(workspace.home, 'tmp');
    await mkdir(tmp);
    const prompt = promptFor(workspace);
    return runCli(process.execPath, {
      args: [geminiCliEntry(), ...(model ? ['-m', model] : []), '--output-format', 'json', '--approval-mode', 'yolo', '-p', prompt],
      cwd: workspace.work,
      env: {
        HOME: workspace.home,
        TMPDIR: tmp,
        GOOGLE_GEMINI_BASE_URL: rig.gateway[cell],
        GEMINI_API_KEY: GATEWAY_KEY,
        // Headless runs refuse an untrusted folder; a fresh temp dir is one.
        GEMINI_CLI_TRUST_WORKSPACE: 'true',
        // Runs in this process instead of relaunching itself with a larger heap.
        GEMINI_CLI_NO_RELAUNCH: 'true',
      },
      timeoutMs: RUN_TIMEOUT_MS,
    });
  });
  // `--output-format json` prints one object: the answer, or the API error it stopped on.
  const result = jsonOutput(run.stdout);
  expect(result?.error, context).toBeUndefined();
  expect(result?.response, context).toContain(workspace.token);
  expect(result?.stats?.tools?.byName?.read_file, context).toMatchObject({ success: 1, fail: 0 });
  expect(run.exitCode, context).toBe(0);
  return workspace.token;
}

describe('Gemini CLI through the gateway', () => {
  describe.each([
    ['its default model (auto routing)', undefined],
    [`model ${ROUTED_MODEL}`, ROUTED_MODEL],
  ])('%s', (_name, model) => {
    // Asked for a file by name alone, the local model resolves it against the workspace Gemini
    // CLI states in its `<session_context>` ("Workspace Directories: …").
    itRunsEveryCell({
      does: 'reads a file with its read_file tool and answers from it',
      cells: ['gemini', 'anthropic', 'chat', 'responses', 'bedrock-converse'],
      run: (cell, promptFor) => expectGeminiCliReadsTheFile(cell, model, promptFor),
      rig: () => rig,
      timeoutMs: TEST_TIMEOUT_MS,
    });
  });
});
