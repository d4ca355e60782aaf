import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createOpenAIProvider } from '../../src/providers/openai/openai-provider.js';
import { startFakeOpenAI } from '../fakes/fake-openai.js';
import { codexConfigToml } from './codex-config.js';
import { jsonLines } from './agent-cells.js';
import { codexBinary, runCli } from './cli-harness.js';
import {
  CLIENT_SERVER_NAME,
  expectOneGovernedCall,
  GATEWAY_TOOL,
  AGENT_MODEL,
  RUN_TIMEOUT_MS,
  TEST_TIMEOUT_MS,
  runWithVault,
  onUpstreamModel,
  type McpAgentRig,
  useMcpAgentRig,
  type VaultRun,
} from './mcp-rig.js';
import { expectUpstreamSawToolResult, GATEWAY_KEY } from './scripted-upstream.js';

/**
 * Codex (`codex exec`, the real binary) with the gateway's `/mcp` as its MCP server `gw` and the
 * gateway's local model: the model calls the vault's tool (in Codex's `mcp__gw` namespace), Codex
 * calls `vault__reveal` at `/mcp` with the gateway key, the gateway calls the vault with its own
 * credential, and the answer carries the vault's random token.
 */

const rig = useMcpAgentRig(codexBinary);

/**
 * The gateway as Codex's model provider and as its MCP server, as `codex mcp add gw --url …
 * --bearer-token-env-var INFERGATE_API_KEY` writes it: one key for both.
 */
function configToml(gatewayUrl: string): string {
  return [
    codexConfigToml(AGENT_MODEL, gatewayUrl),
    `[mcp_servers.${CLIENT_SERVER_NAME}]`,
    `url = "${gatewayUrl}/mcp"`,
    'bearer_token_env_var = "INFERGATE_API_KEY"',
    '',
  ].join('\n');
}

/** Runs `codex exec --json` in a fresh CODEX_HOME on `rig`'s gateway, the gateway's `/mcp` its server `gw`. */
function runCodex(rig: McpAgentRig): Promise<VaultRun> {
  return runWithVault(rig, async (workspace) => {
    await writeFile(join(workspace.home, 'config.toml'), configToml(rig.gateway));
    return runCli(codexBinary(), {
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
  });
}

/** Codex called the tool once at `/mcp` and answered with the vault's token; the vault saw only the gateway's credential; the gateway logged the call. */
function expectCodexCalledTheVault({ run, token, context }: VaultRun, rig: McpAgentRig): void {
  const events = jsonLines(run.stdout);
  const completed = events.filter((event) => event.type === 'item.completed').map((event) => event.item);
  const mcpCalls = completed.filter((item) => item.type === 'mcp_tool_call');
  expect(mcpCalls, context).toEqual([expect.objectContaining({ server: CLIENT_SERVER_NAME, tool: GATEWAY_TOOL, status: 'completed' })]);
  expect(JSON.stringify(mcpCalls[0].result), context).toContain(token);
  const answer = completed.filter((item) => item.type === 'agent_message').at(-1);
  expect(answer?.text, context).toContain(token);
  expect(events.at(-1)?.type, context).toBe('turn.completed');
  expect(run.exitCode, context).toBe(0);
  expectOneGovernedCall(rig, context);
}

describe('Codex through the gateway’s /mcp', () => {
  it(
    'lists and calls the vault’s tool with the gateway key; the answer carries its token; the vault saw only the gateway’s credential; the access log has the call',
    async () => {
      expectCodexCalledTheVault(await runCodex(rig()), rig());
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'calls the vault’s tool on a strict Chat Completions upstream model: Codex’s mcp__gw namespace flattened for it, the call mapped back',
    async () => {
      const chat = await startFakeOpenAI({ endpoints: ['chat'] });
      await onUpstreamModel(
        chat,
        'chat',
        { provider: createOpenAIProvider({ baseURL: `${chat.url}/v1`, apiKey: 'up-key', responses: false }), upstreamModel: 'gpt-4.1' },
        async (rig) => {
          const run = await runCodex(rig);
          expectCodexCalledTheVault(run, rig);
          expectUpstreamSawToolResult('chat', chat, run.token);
        },
      );
    },
    TEST_TIMEOUT_MS,
  );
});
