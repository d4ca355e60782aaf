import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createGateway } from '../../src/gateway.js';
import type { McpServerConfig } from '../../src/mcp/mcp-options.js';
import { createUpstreams } from '../../src/mcp/upstreams.js';
import { isUpstreamTimeout } from '../../src/mcp/upstream-timeout.js';
import { recordingLogger } from '../helpers/recording-logger.js';
import { serve, type Served } from '../helpers/serve.js';

/** stdio upstreams: a real SDK server script run with `node`, the SDK's client through the gateway's `/mcp`. */

const FIXTURE = fileURLToPath(new URL('./fixtures/stdio-server.mjs', import.meta.url));
const FIXTURE_TOKEN = 'fixture-token-7f3a9c';
const GATEWAY_SECRET = 'gateway-own-secret-52b1';
const fixture = (extra: Partial<McpServerConfig> = {}): McpServerConfig => ({ command: process.execPath, args: [FIXTURE], env: { FIXTURE_TOKEN }, ...extra });

interface Running {
  served: Served;
  dispose(): Promise<void>;
}
const running: Running[] = [];

async function startGateway(servers: Record<string, McpServerConfig>, logger = recordingLogger().logger): Promise<Served> {
  const instance = createGateway({ providers: {}, models: [], keys: [{ key: 'sk-mcp', id: 'mcp-key', mcp: ['*'] }], logger, mcp: { servers } });
  const served = await serve(instance as never);
  running.push({ served, dispose: () => instance.dispose() });
  return served;
}

async function connect(gateway: Served): Promise<Client> {
  // A client that checks no output schema itself (no validator at all): what arrives is what the gateway passed on.
  const client = new Client({ name: 'test', version: '1' }, { jsonSchemaValidator: { getValidator: () => undefined as never } });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`), { requestInit: { headers: { authorization: 'Bearer sk-mcp' } } }));
  return client;
}

async function textOf(client: Client, name: string): Promise<string> {
  const result = await client.callTool({ name, arguments: {} });
  return (result.content as { text: string }[])[0]!.text;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

beforeAll(() => {
  process.env.INFERGATE_TEST_GATEWAY_SECRET = GATEWAY_SECRET;
});
afterAll(() => {
  delete process.env.INFERGATE_TEST_GATEWAY_SECRET;
});
afterEach(async () => {
  for (const each of running.splice(0)) {
    await each.served.close();
    await each.dispose();
  }
});

describe('stdio upstreams', () => {
  it('serves the tools of a local command; one process per gateway instance, shared by its sessions', async () => {
    const gateway = await startGateway({ local: fixture() });
    const first = await connect(gateway);
    const second = await connect(gateway);
    expect((await first.listTools()).tools.map((tool) => tool.name)).toContain('local__pid');
    expect(await textOf(first, 'local__pid')).toBe(await textOf(second, 'local__pid'));
    // The process keeps its state across sessions of this instance.
    expect(await textOf(first, 'local__count')).toBe('1');
    expect(await textOf(second, 'local__count')).toBe('2');
    await Promise.all([first.close(), second.close()]);
  });

  it('gives the child only a minimal environment and the config’s env, never the gateway’s own', async () => {
    const gateway = await startGateway({ local: fixture() });
    const client = await connect(gateway);
    const { names, token } = JSON.parse(await textOf(client, 'local__env')) as { names: string[]; token: string };
    expect(token).toBe(FIXTURE_TOKEN);
    expect(names).not.toContain('INFERGATE_TEST_GATEWAY_SECRET');
    expect(names.every((name) => ['FIXTURE_TOKEN', 'HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER'].includes(name))).toBe(true);
    await client.close();
  });

  it('logs the child’s stderr (its env values blanked) instead of inheriting it', async () => {
    const { logger, lines } = recordingLogger();
    const gateway = await startGateway({ local: fixture() }, logger);
    const client = await connect(gateway);
    await textOf(client, 'local__pid');
    const stderr = () => lines.filter((line) => line.message === 'MCP stdio server stderr').map((line) => line.fields);
    await vi.waitFor(() => expect(stderr()).toContainEqual({ server: 'local', line: 'fixture starting with token [redacted]' }));
    expect(JSON.stringify(lines)).not.toContain(FIXTURE_TOKEN);
    await client.close();
  });

  it('starts a child that died again when it is next used', async () => {
    const gateway = await startGateway({ local: fixture() });
    const client = await connect(gateway);
    const before = Number(await textOf(client, 'local__pid'));
    await expect(client.callTool({ name: 'local__crash', arguments: {} })).rejects.toThrow();
    const after = Number(await textOf(client, 'local__pid'));
    expect(after).not.toBe(before);
    expect(alive(before)).toBe(false);
    await client.close();
  });

  it('a command that does not exist is down for the session; the other servers work', async () => {
    const gateway = await startGateway({ local: fixture(), missing: { command: '/nonexistent/infergate-mcp-server' } });
    const client = await connect(gateway);
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    expect(names).toContain('local__pid');
    expect(names.some((name) => name.startsWith('missing__'))).toBe(false);
    await client.close();
  });

  it('passes a result that does not match the tool’s outputSchema through unchanged', async () => {
    const gateway = await startGateway({ local: fixture() });
    const client = await connect(gateway);
    // Listing first: the gateway's long-lived client has then seen every outputSchema.
    await client.listTools();
    expect(await client.callTool({ name: 'local__off_schema', arguments: {} })).toEqual({
      content: [{ type: 'text', text: 'many' }],
      structuredContent: { count: 'many' },
    });
    expect(await client.callTool({ name: 'local__no_structure', arguments: {} })).toEqual({ content: [{ type: 'text', text: 'no structure' }] });
    await client.close();
  });

  it('close() stops the child', async () => {
    const gateway = await startGateway({ local: fixture() });
    const client = await connect(gateway);
    const pid = Number(await textOf(client, 'local__pid'));
    await client.close();
    const { dispose, served } = running.pop()!;
    await served.close();
    await dispose();
    expect(alive(pid)).toBe(false);
  });
});

describe('a stdio command that cannot start', () => {
  it('is not spawned again for each session while it keeps failing', async () => {
    const starts = join(mkdtempSync(join(tmpdir(), 'infergate-stdio-')), 'starts');
    const script = `require('node:fs').appendFileSync(${JSON.stringify(starts)}, 'x'); process.exit(1)`;
    const upstreams = createUpstreams({ servers: { broken: { command: process.execPath, args: ['-e', script] } } });
    try {
      const first = await upstreams.initialize(new AbortController().signal);
      const second = await upstreams.initialize(new AbortController().signal);
      expect(first.broken?.down).toBe('MCP error -32000: Connection closed');
      expect(second).toEqual(first);
      expect(readFileSync(starts, 'utf8')).toBe('x');
    } finally {
      await upstreams.close();
    }
  });
});

describe('stdio upstream timeouts', () => {
  it('a call that outlasts the server’s timeoutMs fails as a timeout, and the process keeps serving', async () => {
    // Long enough for node to start the fixture on a busy machine: the process start is bounded by it too.
    const upstreams = createUpstreams({ servers: { local: fixture({ timeoutMs: 3000 }) } });
    try {
      const signal = new AbortController().signal;
      const error = await upstreams.use('local', {}, signal, (client) => client.callTool({ name: 'hang', arguments: {} })).catch((caught: unknown) => caught);
      expect(isUpstreamTimeout(error)).toBe(true);
      expect((error as Error).message).toBe('Server `local` did not answer within 3000 ms.');
      const { result } = await upstreams.use('local', {}, signal, (client) => client.callTool({ name: 'count', arguments: {} }));
      expect(result.content).toEqual([{ type: 'text', text: '1' }]);
    } finally {
      await upstreams.close();
    }
  });

  it('a command that never answers initialize is down for the session after its timeout', async () => {
    const upstreams = createUpstreams({ servers: { mute: { command: process.execPath, args: ['-e', 'setInterval(() => {}, 1000)'] } }, timeoutMs: 300 });
    try {
      const states = await upstreams.initialize(new AbortController().signal);
      expect(states).toEqual({ mute: { down: 'Server `mute` did not answer within 300 ms.' } });
    } finally {
      await upstreams.close();
    }
  });
});
