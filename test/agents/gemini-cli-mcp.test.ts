import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { jsonOutput } from './agent-cells.js';
import { describeRun, geminiCliEntry, makeWorkspace, runCli, type CliRun } from './cli-harness.js';
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

/**
 * Gemini CLI (`gemini -p`, the real bundle run with this Node) with the gateway's `/mcp` as its
 * MCP server `gw` and the gateway's local model: the model calls the vault's tool
 * (`mcp_gw_vault__reveal` to Gemini CLI), Gemini CLI calls `vault__reveal` at `/mcp` with the
 * gateway key, the gateway calls the vault with its own credential, and the answer carries the
 * vault's random token.
 */

const MODEL = 'team-coder';
/** The tool's name as Gemini CLI offers it to the model: `mcp_<its server name>_<the gateway's name>`. */
const GEMINI_TOOL = `mcp_${CLIENT_SERVER_NAME}_${GATEWAY_TOOL}`;
/** A run (an MCP start-up, two model turns and a tool call) takes a few seconds; this bounds a hung one. */
const RUN_TIMEOUT_MS = 60_000;
const TEST_TIMEOUT_MS = RUN_TIMEOUT_MS + 15_000;

let rig: McpAgentRig;
beforeAll(async () => {
  geminiCliEntry(); // fails here, loudly, when the CLI is missing
  rig = await startMcpAgentRig([MODEL]);
});
afterAll(() => rig?.close());
beforeEach(() => rig.reset());

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

describe('Gemini CLI through the gateway’s /mcp', () => {
  it(
    'lists and calls the vault’s tool with the gateway key; the answer carries its token; the vault saw only the gateway’s credential; the access log has the call',
    async () => {
      const workspace = await makeWorkspace();
      rig.vault.token = workspace.token;
      let run: CliRun;
      try {
        await mkdir(join(workspace.home, '.gemini'));
        await writeFile(join(workspace.home, '.gemini', 'settings.json'), JSON.stringify(settings(rig.gateway)));
        const tmp = join(workspace.home, 'tmp');
        await mkdir(tmp);
        run = await runCli(process.execPath, {
          args: [geminiCliEntry(), '-m', MODEL, '--output-format', 'json', '-p', `Use the ${GEMINI_TOOL} tool and reply with the token it returns.`],
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
      } finally {
        await workspace.remove();
      }
      const context = `${describeRun(run)}\n--- vault\n${describeVault(rig.vault)}`;
      expect(run.timedOut, context).toBe(false);
      const result = jsonOutput(run.stdout);
      expect(result?.error, context).toBeUndefined();
      expect(result?.stats?.tools?.byName?.[GEMINI_TOOL], context).toMatchObject({ count: 1, success: 1, fail: 0 });
      expect(result?.response, context).toContain(workspace.token);
      expect(run.exitCode, context).toBe(0);
      expectVaultServedOneCall(rig.vault, context);
      expectToolCallLogged(rig, context);
    },
    TEST_TIMEOUT_MS,
  );
});
