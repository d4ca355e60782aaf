import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { basename } from 'node:path';
import { claudeCodeBinary, describeRun, makeWorkspace, runCli, type CliRun, type Workspace } from './cli-harness.js';
import { describeUpstream, expectUpstreamSawToolResult, GATEWAY_KEY, startAgentRig, type AgentRig, type Cell } from './scripted-upstream.js';

type Json = Record<string, any>;

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
  const workspace = await makeWorkspace();
  let run: CliRun;
  try {
    const prompt = promptFor(workspace);
    run = await runCli(claudeCodeBinary(), {
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
  } finally {
    await workspace.remove();
  }

  const context = `${describeRun(run)}\n--- upstream\n${cell === 'local' ? 'the local provider' : describeUpstream(cell, rig.upstream[cell])}`;
  expect(run.timedOut, context).toBe(false);
  // `--output-format json` prints one result object: the answer, or the API error it stopped on.
  let result: Json | undefined;
  try {
    result = JSON.parse(run.stdout);
  } catch {
    result = undefined;
  }
  expect(result, context).toMatchObject({ type: 'result', is_error: false });
  expect(result!.result, context).toContain(workspace.token);
  expect(run.exitCode, context).toBe(0);
  return workspace.token;
}

describe('Claude Code through the gateway', () => {
  describe.each([ROUTED_MODEL, CLAUDE_MODEL])('model %s', (model) => {
    it.each(['anthropic', 'chat', 'responses', 'bedrock-invoke', 'bedrock-converse'] as const)(
      'reads a file with its Read tool and answers from it (%s upstream)',
      async (cell) => {
        const token = await expectClaudeCodeReadsTheFile(cell, model);
        expectUpstreamSawToolResult(cell, rig.upstream[cell], token);
      },
      TEST_TIMEOUT_MS,
    );

    it(
      'reads a file with its Read tool and answers from it (local provider)',
      async () => {
        await expectClaudeCodeReadsTheFile('local', model);
      },
      TEST_TIMEOUT_MS,
    );

    // The README's demo: `Read` takes only an absolute path; the local model resolves the name
    // against the working directory Claude Code states ("Primary working directory: …").
    it(
      'reads a file it is asked for by name alone, relative to its working directory (local provider)',
      async () => {
        await expectClaudeCodeReadsTheFile('local', model, (workspace) => `read ${basename(workspace.secretPath)}`);
      },
      TEST_TIMEOUT_MS,
    );
  });
});
