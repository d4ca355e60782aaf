import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { itRunsEveryCell, runInWorkspace, type PromptFor } from './agent-cells.js';
import { codexConfigToml } from './codex-config.js';
import { codexBinary, runCli, type Workspace } from './cli-harness.js';
import { GATEWAY_KEY, startAgentRig, type AgentRig, type Cell } from './scripted-upstream.js';

type Json = Record<string, any>;

/**
 * Codex (`codex exec`, the real binary) through the gateway in each cell: the scripted model calls
 * Codex's own `exec_command` tool to `cat` a file holding a random token, Codex runs it and sends
 * the output back, and the model answers with the token it found there. A cell passes only when
 * that whole loop went through: Codex ran the command, its final message carries the token, and
 * the strict upstream accepted every request and received the token in a tool result.
 */

/**
 * The model names Codex is given, one per request shape it sends:
 * - `gpt-5.5`, a model it knows: its full current tool set (the freeform `apply_patch` with a
 *   grammar, a client-run `tool_search`, `web_search`) and `text.verbosity`;
 * - a name it does not know, as when a gateway routes it to another vendor's model: the fallback
 *   tool set, with a `namespace` tool grouping the multi-agent functions.
 */
const KNOWN_MODEL = 'gpt-5.5';
const ROUTED_MODEL = 'team-coder';
/** A whole run (two model turns and a command) takes about a second; this bounds a hung one. */
const RUN_TIMEOUT_MS = 60_000;
const TEST_TIMEOUT_MS = RUN_TIMEOUT_MS + 15_000;

let rig: AgentRig;
beforeAll(async () => {
  codexBinary(); // fails here, loudly, when the binary is missing
  rig = await startAgentRig([KNOWN_MODEL, ROUTED_MODEL]);
});
afterAll(() => rig?.close());
beforeEach(() => {
  for (const fake of Object.values(rig.upstream)) fake.reset();
});

/** The prompt of most cells: the command, with the file's absolute path. */
const ABSOLUTE = (workspace: Workspace) => `Use the exec_command tool to run \`cat ${workspace.secretPath}\` and reply with the token it prints.`;

interface RunOptions {
  promptFor?: PromptFor | undefined;
  /** The provider's `supports_websockets`. */
  webSockets?: boolean;
}

/** Runs `codex exec --json` in a fresh CODEX_HOME and work dir; checks the command ran and the answer carries the token. */
async function expectCodexReadsTheFile(cell: Cell, model: string, { promptFor = ABSOLUTE, webSockets = false }: RunOptions = {}): Promise<string> {
  const { run, workspace, context } = await runInWorkspace(cell, rig, async (workspace) => {
    await writeFile(join(workspace.home, 'config.toml'), codexConfigToml(model, rig.gateway[cell], webSockets));
    const prompt = promptFor(workspace);
    return runCli(codexBinary(), {
      // No sandbox: the only command is the scripted `cat` in a temp dir, and the bundled
      // bubblewrap needs user namespaces that CI runners may not allow.
      args: ['exec', '--skip-git-repo-check', '--json', '--dangerously-bypass-approvals-and-sandbox', prompt],
      cwd: workspace.work,
      // HOME too: Codex runs commands in a login shell, which would read the developer's profile.
      env: { HOME: workspace.home, CODEX_HOME: workspace.home, INFERGATE_API_KEY: GATEWAY_KEY },
      timeoutMs: RUN_TIMEOUT_MS,
    });
  });
  // `--json` prints one event per line; the items are what Codex did and said.
  const events: Json[] = run.stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line));
  const completed = events.filter((event) => event.type === 'item.completed').map((event) => event.item);
  const commands = completed.filter((item) => item.type === 'command_execution');
  expect(commands, context).toContainEqual(expect.objectContaining({ exit_code: 0, aggregated_output: expect.stringContaining(workspace.token) }));
  // A failed WebSocket handshake other than 426 shows as "Falling back from WebSockets to HTTPS transport".
  expect(
    completed.filter((item) => item.type === 'error' && /websocket/i.test(item.message)),
    context,
  ).toEqual([]);
  const answer = completed.filter((item) => item.type === 'agent_message').at(-1);
  expect(answer?.text, context).toContain(workspace.token);
  expect(events.at(-1)?.type, context).toBe('turn.completed');
  expect(run.exitCode, context).toBe(0);
  return workspace.token;
}

describe('Codex through the gateway', () => {
  describe.each([KNOWN_MODEL, ROUTED_MODEL])('model %s', (model) => {
    // Asked for a file by name alone (no tool, no command), the local model `cat`s it at the path
    // it resolves against the working directory Codex states (`<cwd>…</cwd>`).
    itRunsEveryCell({
      does: 'runs cat with exec_command and answers from its output',
      cells: ['responses', 'chat', 'anthropic', 'azure-v1', 'azure-dated', 'gemini'],
      run: (cell, promptFor) => expectCodexReadsTheFile(cell, model, { promptFor }),
      rig: () => rig,
      timeoutMs: TEST_TIMEOUT_MS,
    });

    it(
      'asks for a WebSocket when its provider supports them, and goes on over HTTP at once on the 426 (local provider)',
      async () => {
        await expectCodexReadsTheFile('local', model, { webSockets: true });
      },
      TEST_TIMEOUT_MS,
    );
  });
});
