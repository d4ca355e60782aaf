import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { afterAll, beforeAll, beforeEach, expect } from 'vitest';
import { z } from 'zod';
import { createGateway } from '../../src/gateway.js';
import type { Logger } from '../../src/logger.js';
import { createLocalProvider } from '../../src/providers/local/local-provider.js';
import type { Provider } from '../../src/providers/provider.js';
import { serve, type Served } from '../helpers/serve.js';
import { type CliRun, describeRun, makeWorkspace, type Workspace } from './cli-harness.js';
import type { FakeUpstream, RecordedRequest } from '../fakes/fake-server.js';
import { GATEWAY_KEY, scriptedReply } from './scripted-upstream.js';

/**
 * The MCP side of the agent tests: a `vault` MCP server built with the SDK on loopback, whose one
 * tool (`reveal`) answers with the current run's random token, behind a gateway that serves the
 * model from the local provider and the vault at `/mcp`. The CLI gets the gateway's key for both;
 * the vault only ever sees the gateway's own credential for it.
 */

/** The credential the gateway's config holds for the vault (injected as `Authorization: Bearer …`). */
export const VAULT_CREDENTIAL = 'vault-upstream-credential';
/** A gateway key that may use models but no MCP server the gateway has (its `mcp` names another). */
export const NO_VAULT_KEY = 'sk-agent-no-vault';
/** The name the CLIs register the gateway's `/mcp` under (no `_`: Gemini CLI splits its tool names on the first one). */
export const CLIENT_SERVER_NAME = 'gw';
/** The vault's tool as the gateway lists it: `<server>__<tool>`. */
export const GATEWAY_TOOL = 'vault__reveal';

/**
 * The model the agents ask for: a name none of them knows (for a model it knows, Codex defers MCP
 * tools behind its client-run `tool_search`, which the local model does not use).
 */
export const AGENT_MODEL = 'team-coder';
/** A run (an MCP start-up, two model turns and a tool call) takes a few seconds; this bounds a hung one. */
export const RUN_TIMEOUT_MS = 60_000;
export const TEST_TIMEOUT_MS = RUN_TIMEOUT_MS + 15_000;

/** One HTTP request the vault received: its JSON-RPC methods and every header, to check what the gateway injected. */
export interface VaultRequest {
  httpMethod: string;
  headers: Record<string, string | string[] | undefined>;
  /** The JSON-RPC methods of a POST's body (a batch holds several). */
  rpc: string[];
  body: string;
}

export interface Vault {
  url: string;
  /** What `reveal` answers with; each run sets its workspace's token. */
  token: string;
  requests: VaultRequest[];
  /** The `reveal` calls, with the arguments the model filled in. */
  calls: Record<string, unknown>[];
  reset(): void;
  close(): Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<string> {
  let body = '';
  for await (const chunk of req) body += chunk;
  return body;
}

/** The upstream MCP server: Streamable HTTP with sessions, as the SDK's own servers run. */
export async function startVault(): Promise<Vault> {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const vault: Omit<Vault, 'url' | 'close'> = {
    token: '',
    requests: [],
    calls: [],
    reset() {
      this.token = '';
      this.requests.length = 0;
      this.calls.length = 0;
    },
  };
  const served: Served = await serve(async (req, res) => {
    const body = req.method === 'POST' ? await readBody(req) : '';
    const parsed: unknown = body ? JSON.parse(body) : undefined;
    const messages = (Array.isArray(parsed) ? parsed : parsed ? [parsed] : []) as { method?: unknown }[];
    vault.requests.push({
      httpMethod: req.method ?? '',
      headers: { ...req.headers },
      rpc: messages.map((message) => String(message.method ?? 'response')),
      body,
    });
    const id = req.headers['mcp-session-id'];
    let transport = typeof id === 'string' ? transports.get(id) : undefined;
    if (!transport) {
      const created = new StreamableHTTPServerTransport({ sessionIdGenerator: randomUUID, onsessioninitialized: (sid) => void transports.set(sid, created) });
      const server = new McpServer({ name: 'vault', version: '1' });
      server.registerTool(
        'reveal',
        { description: 'Reveals the vault token', inputSchema: { purpose: z.string().describe('Why the token is needed') } },
        async (args) => {
          vault.calls.push(args);
          return { content: [{ type: 'text', text: `The vault token is ${vault.token}` }] };
        },
      );
      await server.connect(created);
      transport = created;
    }
    await transport.handleRequest(req, res, parsed);
  });
  return Object.assign(vault, { url: `${served.url}/mcp`, close: () => served.close() });
}

export interface McpAgentRig {
  /** Base URL of the gateway (its MCP endpoint is `${gateway}/mcp`). */
  gateway: string;
  vault: Vault;
  /** Everything the gateway logged (its access log on), one object per line. */
  log: Record<string, unknown>[];
  /** Forgets what the vault received and what the gateway logged. */
  reset(): void;
  close(): Promise<void>;
}

/** Where the rig's gateway sends the model: the local provider unless a test gives another. */
export interface RigModel {
  provider: Provider;
  upstreamModel: string;
}

/**
 * The vault behind a gateway serving `publicModels` (from the local provider unless `model`). Two
 * keys: the agents' `GATEWAY_KEY`, whose `mcp` scope names the vault, and `NO_VAULT_KEY`, whose
 * does not.
 */
export async function startMcpAgentRig(publicModels: readonly string[], model?: RigModel): Promise<McpAgentRig> {
  const vault = await startVault();
  const log: Record<string, unknown>[] = [];
  const record = (level: string) => (message: string, fields?: Record<string, unknown>) => void log.push({ level, message, ...fields });
  const logger: Logger = { info: record('info'), warn: record('warn'), error: record('error') };
  const { provider, upstreamModel } = model ?? { provider: createLocalProvider({ chunkDelayMs: 0 }), upstreamModel: 'local-chat' };
  const gateway = createGateway({
    keys: [
      { key: GATEWAY_KEY, id: 'agent', mcp: ['vault'] },
      { key: NO_VAULT_KEY, id: 'agent-no-vault', mcp: ['github'] },
    ],
    providers: { model: provider },
    models: publicModels.map((id) => ({ id, provider: 'model', upstreamModel })),
    mcp: { servers: { vault: { url: vault.url, bearerToken: VAULT_CREDENTIAL } } },
    logger,
    accessLog: true,
  });
  const served = await serve(gateway as never);
  return {
    gateway: served.url,
    vault,
    log,
    reset() {
      vault.reset();
      log.length = 0;
    },
    async close() {
      await served.close();
      await vault.close();
      await provider.close?.();
    },
  };
}

/** The vault's requests as one line each, for an assertion message. */
export function describeVault(vault: Vault): string {
  if (vault.requests.length === 0) return 'the vault received no request';
  return vault.requests.map((request, i) => `#${i + 1} ${request.httpMethod} ${request.rpc.join(',')} auth=${request.headers.authorization}`).join('\n');
}

/**
 * The vault served the call the agent made: `reveal` ran once, and every request the vault got
 * carried the gateway's credential for it, never the agent's gateway key (in no header, no body).
 */
export function expectVaultServedOneCall(vault: Vault, context: string): void {
  const message = `${context}\n--- vault\n${describeVault(vault)}`;
  expect(vault.calls, message).toHaveLength(1);
  expect(
    vault.requests.flatMap((request) => request.rpc),
    message,
  ).toContain('tools/call');
  expectOnlyTheGatewayCredential(vault, message);
}

/** Every request the vault received carried `VAULT_CREDENTIAL` and nothing of the agents' keys. */
function expectOnlyTheGatewayCredential(vault: Vault, message: string): void {
  for (const request of vault.requests) {
    expect(request.headers.authorization, message).toBe(`Bearer ${VAULT_CREDENTIAL}`);
    const seen = JSON.stringify(request.headers) + request.body;
    expect(seen, message).not.toContain(GATEWAY_KEY);
    expect(seen, message).not.toContain(NO_VAULT_KEY);
  }
}

/**
 * The gateway's access log has the call, once, as the agents' key's (`tool call`: server, tool,
 * outcome), and no line of the log holds a key, the vault's credential or its token.
 */
export function expectToolCallLogged(rig: McpAgentRig, context: string): void {
  const message = `${context}\n--- gateway log\n${rig.log.map((line) => JSON.stringify(line)).join('\n')}`;
  expect(
    rig.log.filter((line) => line.message === 'tool call'),
    message,
  ).toEqual([expect.objectContaining({ keyId: 'agent', server: 'vault', tool: 'reveal', outcome: 'ok' })]);
  const logged = JSON.stringify(rig.log);
  for (const secret of [GATEWAY_KEY, NO_VAULT_KEY, VAULT_CREDENTIAL, rig.vault.token]) expect(logged, message).not.toContain(secret);
}

/**
 * A test file's rig, serving `AGENT_MODEL`: started once `cliPresent` found the CLI (it throws,
 * never skips, when the CLI is missing), reset before each test, closed after the file.
 */
export function useMcpAgentRig(cliPresent: () => unknown): () => McpAgentRig {
  let rig: McpAgentRig | undefined;
  beforeAll(async () => {
    cliPresent();
    rig = await startMcpAgentRig([AGENT_MODEL]);
  });
  afterAll(() => rig?.close());
  beforeEach(() => rig?.reset());
  return () => rig!;
}

/** A finished run: what the CLI did, the token the vault revealed to it, the assertion message. */
export interface VaultRun {
  run: CliRun;
  token: string;
  /** What the CLI printed and what the vault received. */
  context: string;
}

/** Runs the agent (`start`) in a fresh workspace whose token the vault reveals, removed afterwards; fails when the run timed out. */
export async function runWithVault(rig: McpAgentRig, start: (workspace: Workspace) => Promise<CliRun>): Promise<VaultRun> {
  const workspace = await makeWorkspace();
  rig.vault.token = workspace.token;
  let run: CliRun;
  try {
    run = await start(workspace);
  } finally {
    await workspace.remove();
  }
  const context = `${describeRun(run)}\n--- vault\n${describeVault(rig.vault)}`;
  expect(run.timedOut, context).toBe(false);
  return { run, token: workspace.token, context };
}

/**
 * Runs `body` on a rig whose model is the strict fake `upstream` (answering as the scripted model
 * on its `wire`) behind `model.provider`; closes both after.
 */
export async function onUpstreamModel(
  upstream: FakeUpstream,
  wire: Parameters<typeof scriptedReply>[0],
  model: RigModel,
  body: (rig: McpAgentRig) => Promise<void>,
): Promise<void> {
  upstream.answerWith((request: RecordedRequest) => scriptedReply(wire, request.body));
  try {
    const rig = await startMcpAgentRig([AGENT_MODEL], model);
    try {
      await body(rig);
    } finally {
      await rig.close();
    }
  } finally {
    await upstream.close();
  }
}

/** The call went through the gateway as it should: the vault served it once with only the gateway's credential, and the access log has it. */
export function expectOneGovernedCall(rig: McpAgentRig, context: string): void {
  expectVaultServedOneCall(rig.vault, context);
  expectToolCallLogged(rig, context);
}
