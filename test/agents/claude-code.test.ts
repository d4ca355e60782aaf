import { afterAll, beforeAll, beforeEach, describe, expect } from 'vitest';
import { itRunsEveryCell, jsonOutput, runInWorkspace } from './agent-cells.js';
import { claudeCodeBinary, runCli, type Workspace } from './cli-harness.js';
import { GATEWAY_KEY, startAgentRig, type AgentRig, type Cell } from './scripted-upstream.js';

/**
 * Claude Code (`claude -p`, the real binary) through the gateway in each cell: the scripted model
 * calls Claude Code's own `Read` tool on a file holding a random token, Claude Code reads it and
 * sends the result back, and the model answers with the token it found there. A cell passes only
 * when that whole loop went through: the token is in Claude Code's final answer, and the strict
 * upstream accepted every request and received the token in a tool result.
 */

/**
 * The model names Claude Code is given, one per request shape it sends:
 * - a name it does not know, as when a gateway routes it to another vendor's model: its full
 *   current shape (a `role: "system"` message in the conversation, adaptive thinking,
 *   `output_config.effort`, a deferred-tool placeholder);
 * - a Claude model it knows from before adaptive thinking: `thinking: {type: "enabled"}` with a budget.
 */
const ROUTED_MODEL = 'team-coder';
const CLAUDE_MODEL = 'claude-sonnet-4-5';
/** A whole run (two model turns and a file read) takes about a second; this bounds a hung one. */
const RUN_TIMEOUT_MS = 60_000;
const TEST_TIMEOUT_MS = RUN_TIMEOUT_MS + 15_000;

let rig: AgentRig;
beforeAll(async () => {
  claudeCodeBinary(); // fails here, loudly, when the binary is missing
  rig = await startAgentRig([ROUTED_MODEL, CLAUDE_MODEL]);
});
afterAll(() => rig?.close());
beforeEach(() => {
  for (const fake of Object.values(rig.upstream)) fake.reset();
});

/** The prompt of most cells: the file by its absolute path. */
const ABSOLUTE = (workspace: Workspace) => `Use the Read tool to read ${workspace.secretPath} and reply with the token it contains.`;

/** Runs `claude -p` in a fresh home and work dir; checks its answer carries the file's token. */
async function expectClaudeCodeReadsTheFile(cell: Cell, model: string, promptFor = ABSOLUTE): Promise<string> {
  const { run, workspace, context } = await runInWorkspace(cell, rig, async (workspace) => {
    const prompt = promptFor(workspace);
    return runCli(claudeCodeBinary(), {
      args: ['-p', prompt, '--output-format', 'json'],
      cwd: workspace.work,
      env: {
        HOME: workspace.home,
        ANTHROPIC_BASE_URL: rig.gateway[cell],
        ANTHROPIC_API_KEY: GATEWAY_KEY,
        ANTHROPIC_MODEL: model,
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        DISABLE_AUTOUPDATER: '1',
        // A failing cell stops at the gateway's first error instead of backing off until the timeout.
        CLAUDE_CODE_MAX_RETRIES: '0',
      },
      timeoutMs: RUN_TIMEOUT_MS,
    });
  });
  // `--output-format json` prints one result object: the answer, or the API error it stopped on.
  const result = jsonOutput(run.stdout);
  expect(result, context).toMatchObject({ type: 'result', is_error: false });
  expect(result!.result, context).toContain(workspace.token);
  expect(run.exitCode, context).toBe(0);
  return workspace.token;
}

describe('Claude Code through the gateway', () => {
  describe.each([ROUTED_MODEL, CLAUDE_MODEL])('model %s', (model) => {
    // `Read` takes only an absolute path: asked for a file by name alone, the local model resolves
    // it against the working directory Claude Code states ("Primary working directory: …").
    itRunsEveryCell({
      does: 'reads a file with its Read tool and answers from it',
      cells: ['anthropic', 'chat', 'responses', 'bedrock-invoke', 'bedrock-converse', 'gemini'],
      run: (cell, promptFor) => expectClaudeCodeReadsTheFile(cell, model, promptFor),
      rig: () => rig,
      timeoutMs: TEST_TIMEOUT_MS,
    });
  });
});
