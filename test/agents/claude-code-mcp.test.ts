import { describe, expect, it } from 'vitest';
import { createAnthropicProvider } from '../../src/providers/anthropic/anthropic-provider.js';
import { startFakeAnthropic } from '../fakes/fake-anthropic.js';
import { jsonLines } from './agent-cells.js';
import { claudeCodeBinary, runCli } from './cli-harness.js';
import {
  CLIENT_SERVER_NAME,
  expectOneGovernedCall,
  GATEWAY_TOOL,
  NO_VAULT_KEY,
  AGENT_MODEL,
  RUN_TIMEOUT_MS,
  TEST_TIMEOUT_MS,
  runWithVault,
  useMcpAgentRig,
  type VaultRun,
  onUpstreamModel,
  type McpAgentRig,
} from './mcp-rig.js';
import { expectUpstreamSawToolResult, GATEWAY_KEY } from './scripted-upstream.js';

type Json = Record<string, any>;

/**
 * Claude Code (`claude -p`, the real binary) with the gateway's `/mcp` as its MCP server `gw` and
 * the gateway's local model: the model calls the vault's tool (`mcp__gw__vault__reveal` to Claude
 * Code), Claude Code calls `vault__reveal` at `/mcp` with the gateway key, the gateway calls the
 * vault with its own credential, and the answer carries the vault's random token.
 */

/** The tool's name as Claude Code offers it to the model: `mcp__<its server name>__<the gateway's name>`. */
const CLAUDE_TOOL = `mcp__${CLIENT_SERVER_NAME}__${GATEWAY_TOOL}`;

/** The local model's rig. */
const local = useMcpAgentRig(claudeCodeBinary);

interface McpRun extends VaultRun {
  /** The `--output-format stream-json` events: `system/init` first, `result` last. */
  events: Json[];
}

/** Runs `claude -p` in a fresh home on `rig`'s gateway, with its `/mcp` registered per run (`--mcp-config`) under the key `mcpKey`. */
async function runClaudeCode(rig: McpAgentRig, mcpKey: string): Promise<McpRun> {
  const mcpConfig = { mcpServers: { [CLIENT_SERVER_NAME]: { type: 'http', url: `${rig.gateway}/mcp`, headers: { Authorization: `Bearer ${mcpKey}` } } } };
  const finished = await runWithVault(rig, (workspace) =>
    runCli(claudeCodeBinary(), {
      args: [
        '-p',
        `Use the ${CLAUDE_TOOL} tool and reply with the token it returns.`,
        '--output-format',
        'stream-json',
        '--verbose',
        '--mcp-config',
        JSON.stringify(mcpConfig),
        // Only this run's servers, none of the user's.
        '--strict-mcp-config',
        // The server's tools run without a prompt (`--dangerously-skip-permissions` refuses to run as root, as CI does).
        '--allowedTools',
        `mcp__${CLIENT_SERVER_NAME}`,
      ],
      cwd: workspace.work,
      env: {
        HOME: workspace.home,
        ANTHROPIC_BASE_URL: rig.gateway,
        ANTHROPIC_API_KEY: GATEWAY_KEY,
        ANTHROPIC_MODEL: AGENT_MODEL,
        // Otherwise MCP tools wait behind its ToolSearch tool, which the local model does not use.
        ENABLE_TOOL_SEARCH: 'false',
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        DISABLE_AUTOUPDATER: '1',
        CLAUDE_CODE_MAX_RETRIES: '0',
      },
      timeoutMs: RUN_TIMEOUT_MS,
    }),
  );
  return { ...finished, events: jsonLines(finished.run.stdout) };
}

/** The start-up event: the tools Claude Code offers the model and the state of each MCP server. */
function initEvent(events: Json[]): Json | undefined {
  return events.find((event) => event.type === 'system' && event.subtype === 'init');
}

/** Claude Code listed the tool, called it once, and answered with the vault's token; the vault saw only the gateway's credential; the gateway logged the call. */
function expectClaudeCodeCalledTheVault({ run, token, events, context }: McpRun, rig: McpAgentRig): void {
  const init = initEvent(events);
  expect(init?.mcp_servers, context).toContainEqual(expect.objectContaining({ name: CLIENT_SERVER_NAME, status: 'connected' }));
  expect(init?.tools, context).toContain(CLAUDE_TOOL);
  const toolUses = events
    .filter((event) => event.type === 'assistant')
    .flatMap((event) => event.message?.content ?? [])
    .filter((block: Json) => block.type === 'tool_use');
  expect(
    toolUses.map((block: Json) => block.name),
    context,
  ).toEqual([CLAUDE_TOOL]);
  const result = events.at(-1);
  expect(result, context).toMatchObject({ type: 'result', is_error: false, permission_denials: [] });
  expect(result?.result, context).toContain(token);
  expect(run.exitCode, context).toBe(0);
  expectOneGovernedCall(rig, context);
}

describe('Claude Code through the gateway’s /mcp', () => {
  it(
    'lists and calls the vault’s tool with the gateway key; the answer carries its token; the vault saw only the gateway’s credential; the access log has the call',
    async () => {
      expectClaudeCodeCalledTheVault(await runClaudeCode(local(), GATEWAY_KEY), local());
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'does not see the vault’s tool with a key whose mcp scope leaves the vault out; the vault gets no request at all',
    async () => {
      const rig = local();
      const { run, token, events, context } = await runClaudeCode(rig, NO_VAULT_KEY);
      const init = initEvent(events);
      // Connected (the key is valid), with no tool of the gateway's.
      expect(init?.mcp_servers, context).toContainEqual(expect.objectContaining({ name: CLIENT_SERVER_NAME, status: 'connected' }));
      expect(
        (init?.tools ?? []).filter((name: string) => name.startsWith(`mcp__${CLIENT_SERVER_NAME}__`)),
        context,
      ).toEqual([]);
      expect(init?.tools?.length, context).toBeGreaterThan(0);
      expect(run.stdout, context).not.toContain(token);
      // Not even initialized: the gateway talks only to the servers the key's patterns could reach.
      expect(rig.vault.requests, context).toEqual([]);
      expect(rig.log.filter((line) => line.message === 'tool call')).toEqual([]);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'calls the vault’s tool on a strict Anthropic upstream model: the tool’s definition and its result go through the gateway to the model',
    async () => {
      const anthropic = await startFakeAnthropic();
      await onUpstreamModel(
        anthropic,
        'anthropic',
        { provider: createAnthropicProvider({ baseURL: anthropic.url, apiKey: 'up-key' }), upstreamModel: 'claude-sonnet-4-5' },
        async (rig) => {
          const run = await runClaudeCode(rig, GATEWAY_KEY);
          expectClaudeCodeCalledTheVault(run, rig);
          expectUpstreamSawToolResult('anthropic', anthropic, run.token);
        },
      );
    },
    TEST_TIMEOUT_MS,
  );
});
