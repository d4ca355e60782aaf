import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { codexBinary, describeRun, makeWorkspace, runCli, type CliRun } from './cli-harness.js';
import {
  CLIENT_SERVER_NAME,
  describeVault,
  expectToolCallLogged,
  expectVaultServedOneCall,
  GATEWAY_TOOL,
  startMcpAgentRig,
  type McpAgentRig,
} from './mcp-rig.js';
import { GATEWAY_KEY } from './scripted-upstream.js';

type Json = Record<string, any>;

/**
 * Codex (`codex exec`, the real binary) with the gateway's `/mcp` as its MCP server `gw` and the
 * gateway's local model: the model calls the vault's tool (in Codex's `mcp__gw` namespace), Codex
 * calls `vault__reveal` at `/mcp` with the gateway key, the gateway calls the vault with its own
 * credential, and the answer carries the vault's random token.
 */

/**
 * A model name Codex does not know: for the models it knows (`gpt-5.5`) it defers every MCP tool
 * behind its client-run `tool_search`, which the local model does not use.
 */
const MODEL = 'team-coder';
/** A run (an MCP start-up, two model turns and a tool call) takes a few seconds; this bounds a hung one. */
const RUN_TIMEOUT_MS = 60_000;
const TEST_TIMEOUT_MS = RUN_TIMEOUT_MS + 15_000;

let rig: McpAgentRig;
beforeAll(async () => {
  codexBinary(); // fails here, loudly, when the binary is missing
  rig = await startMcpAgentRig([MODEL]);
});
afterAll(() => rig?.close());
beforeEach(() => rig.reset());

/**
 * The gateway as Codex's model provider and as its MCP server, as `codex mcp add gw --url …
 * --bearer-token-env-var INFERGATE_API_KEY` writes it: one key for both.
 */
function configToml(gatewayUrl: string): string {
  return [
    `model = "${MODEL}"`,
    'model_provider = "infergate"',
    '',
    '[model_providers.infergate]',
    'name = "infergate"',
    `base_url = "${gatewayUrl}/v1"`,
    'env_key = "INFERGATE_API_KEY"',
    'wire_api = "responses"',
    'request_max_retries = 0',
    'stream_max_retries = 0',
    '',
    `[mcp_servers.${CLIENT_SERVER_NAME}]`,
    `url = "${gatewayUrl}/mcp"`,
    'bearer_token_env_var = "INFERGATE_API_KEY"',
    '',
  ].join('\n');
}

describe('Codex through the gateway’s /mcp', () => {
  it(
    'lists and calls the vault’s tool with the gateway key; the answer carries its token; the vault saw only the gateway’s credential; the access log has the call',
    async () => {
      const workspace = await makeWorkspace();
      rig.vault.token = workspace.token;
      let run: CliRun;
      try {
        await writeFile(join(workspace.home, 'config.toml'), configToml(rig.gateway));
        run = await runCli(codexBinary(), {
          // Without the bypass, `codex exec` (approval policy "never") refuses every MCP call.
          args: [
            'exec',
            '--skip-git-repo-check',
            '--json',
            '--dangerously-bypass-approvals-and-sandbox',
            `Use the ${GATEWAY_TOOL} tool and reply with the token it returns.`,
          ],
          cwd: workspace.work,
          env: { HOME: workspace.home, CODEX_HOME: workspace.home, INFERGATE_API_KEY: GATEWAY_KEY },
          timeoutMs: RUN_TIMEOUT_MS,
        });
      } finally {
        await workspace.remove();
      }
      const context = `${describeRun(run)}\n--- vault\n${describeVault(rig.vault)}`;
      expect(run.timedOut, context).toBe(false);
      const events: Json[] = run.stdout
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line));
      const completed = events.filter((event) => event.type === 'item.completed').map((event) => event.item);
      const mcpCalls = completed.filter((item) => item.type === 'mcp_tool_call');
      expect(mcpCalls, context).toEqual([expect.objectContaining({ server: CLIENT_SERVER_NAME, tool: GATEWAY_TOOL, status: 'completed' })]);
      expect(JSON.stringify(mcpCalls[0].result), context).toContain(workspace.token);
      const answer = completed.filter((item) => item.type === 'agent_message').at(-1);
      expect(answer?.text, context).toContain(workspace.token);
      expect(events.at(-1)?.type, context).toBe('turn.completed');
      expect(run.exitCode, context).toBe(0);
      expectVaultServedOneCall(rig.vault, context);
      expectToolCallLogged(rig, context);
    },
    TEST_TIMEOUT_MS,
  );
});
