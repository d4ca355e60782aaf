import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createGeminiProvider } from '../../src/providers/gemini/gemini-provider.js';
import { startFakeGemini } from '../fakes/fake-gemini.js';
import { jsonOutput } from './agent-cells.js';
import { geminiCliEntry, runCli } from './cli-harness.js';
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
 * Gemini CLI (`gemini -p`, the real bundle run with this Node) with the gateway's `/mcp` as its
 * MCP server `gw` and the gateway's local model: the model calls the vault's tool
 * (`mcp_gw_vault__reveal` to Gemini CLI), Gemini CLI calls `vault__reveal` at `/mcp` with the
 * gateway key, the gateway calls the vault with its own credential, and the answer carries the
 * vault's random token.
 */

/** The tool's name as Gemini CLI offers it to the model: `mcp_<its server name>_<the gateway's name>`. */
const GEMINI_TOOL = `mcp_${CLIENT_SERVER_NAME}_${GATEWAY_TOOL}`;

const rig = useMcpAgentRig(geminiCliEntry);

/**
 * `~/.gemini/settings.json`: the gateway key as a Gemini API key, nothing that would reach the
 * internet (as in gemini-cli.test.ts), and the gateway's `/mcp` as `gemini mcp add -s user -t http
 * -H "Authorization: Bearer …" gw URL --trust` writes it. Without `trust` (or `--approval-mode
 * yolo`) a headless run offers the model no MCP tool at all.
 */
function settings(gatewayUrl: string): Record<string, unknown> {
  return {
    security: { auth: { selectedType: 'gemini-api-key' } },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
    ide: { enabled: false },
    mcpServers: { [CLIENT_SERVER_NAME]: { type: 'http', url: `${gatewayUrl}/mcp`, headers: { Authorization: `Bearer ${GATEWAY_KEY}` }, trust: true } },
  };
}

/** Runs `gemini -p` in a fresh home on `rig`'s gateway, the gateway's `/mcp` its server `gw`. */
function runGeminiCli(rig: McpAgentRig): Promise<VaultRun> {
  return runWithVault(rig, async (workspace) => {
    await mkdir(join(workspace.home, '.gemini'));
    await writeFile(join(workspace.home, '.gemini', 'settings.json'), JSON.stringify(settings(rig.gateway)));
    const tmp = join(workspace.home, 'tmp');
    await mkdir(tmp);
    return runCli(process.execPath, {
      args: [geminiCliEntry(), '-m', AGENT_MODEL, '--output-format', 'json', '-p', `Use the ${GEMINI_TOOL} tool and reply with the token it returns.`],
      cwd: workspace.work,
      env: {
        HOME: workspace.home,
        TMPDIR: tmp,
        GOOGLE_GEMINI_BASE_URL: rig.gateway,
        GEMINI_API_KEY: GATEWAY_KEY,
        GEMINI_CLI_TRUST_WORKSPACE: 'true',
        GEMINI_CLI_NO_RELAUNCH: 'true',
      },
      timeoutMs: RUN_TIMEOUT_MS,
    });
  });
}

/** Gemini CLI called the tool once and answered with the vault's token; the vault saw only the gateway's credential; the gateway logged the call. */
function expectGeminiCliCalledTheVault({ run, token, context }: VaultRun, rig: McpAgentRig): void {
  const result = jsonOutput(run.stdout);
  expect(result?.error, context).toBeUndefined();
  expect(result?.stats?.tools?.byName?.[GEMINI_TOOL], context).toMatchObject({ count: 1, success: 1, fail: 0 });
  expect(result?.response, context).toContain(token);
  expect(run.exitCode, context).toBe(0);
  expectOneGovernedCall(rig, context);
}

describe('Gemini CLI through the gateway’s /mcp', () => {
  it(
    'lists and calls the vault’s tool with the gateway key; the answer carries its token; the vault saw only the gateway’s credential; the access log has the call',
    async () => {
      expectGeminiCliCalledTheVault(await runGeminiCli(rig()), rig());
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'calls the vault’s tool on a strict Gemini API upstream model: its declaration and result passed through',
    async () => {
      const gemini = await startFakeGemini();
      await onUpstreamModel(
        gemini,
        'gemini',
        { provider: createGeminiProvider({ baseURL: gemini.url, apiKey: 'up-key' }), upstreamModel: 'gemini-3-pro-preview' },
        async (rig) => {
          const run = await runGeminiCli(rig);
          expectGeminiCliCalledTheVault(run, rig);
          expectUpstreamSawToolResult('gemini', gemini, run.token);
        },
      );
    },
    TEST_TIMEOUT_MS,
  );
});
