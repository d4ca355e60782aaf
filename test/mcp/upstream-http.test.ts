import type { Socket } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { createGateway } from '../../src/gateway.js';
import type { McpServerConfig } from '../../src/mcp/mcp-options.js';
import { MemoryMcpSessionStore } from '../../src/mcp/session-store.js';
import { createUpstreams } from '../../src/mcp/upstreams.js';
import { isUpstreamTimeout } from '../../src/mcp/upstream-timeout.js';
import { recordingLogger } from '../helpers/recording-logger.js';
import { serve, type Served } from '../helpers/serve.js';
import { type HttpUpstream, startHttpUpstream } from './fixtures/http-upstream.js';
import { startTokenEndpoint } from './fixtures/token-endpoint.js';

/** HTTP upstreams: SDK servers on loopback, the SDK's client through the gateway's `/mcp`. */

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

async function upstream(options?: Parameters<typeof startHttpUpstream>[0]): Promise<HttpUpstream> {
  const started = await startHttpUpstream(options);
  cleanup.push(() => started.close());
  return started;
}

async function startGateway(
  servers: Record<string, McpServerConfig>,
  extra: { store?: MemoryMcpSessionStore; logger?: ReturnType<typeof recordingLogger>['logger'] } = {},
) {
  const instance = createGateway({
    providers: {},
    models: [],
    keys: [{ key: 'sk-mcp', id: 'mcp-key', mcp: ['*'] }],
    logger: extra.logger ?? recordingLogger().logger,
    mcp: { servers, ...(extra.store ? { sessionStore: extra.store } : {}) },
  });
  const served = await serve(instance as never);
  cleanup.push(async () => {
    await served.close();
    await instance.dispose();
  });
  return { served, dispose: () => instance.dispose() };
}

async function connect(gateway: Served): Promise<Client> {
  const client = new Client({ name: 'test', version: '1' });
  const transport = new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`), { requestInit: { headers: { authorization: 'Bearer sk-mcp' } } });
  await client.connect(transport);
  cleanup.push(() => client.close());
  return client;
}

async function echo(client: Client, name: string, text: string): Promise<unknown> {
  return (await client.callTool({ name, arguments: { text } })).content;
}

describe('header hygiene', () => {
  it.each(['Mcp-Session-Id', 'mcp-protocol-version', 'Content-Type', 'accept', 'Host', 'content-length'])(
    'refuses a configured %s header at start, naming the server and the header, never its value',
    (name) => {
      const start = () => createUpstreams({ servers: { vault: { url: 'http://127.0.0.1:1/mcp', headers: { [name]: 'value-7d1e' } } } });
      expect(start).toThrow(TypeError);
      expect(start).toThrow(`mcp.servers.vault.headers.${name}: the MCP transport sets this header itself`);
      expect(() => start()).not.toThrow(/value-7d1e/);
    },
  );

  it('sends the configured headers and the bearer on every request, beside the transport’s own session header', async () => {
    const vault = await upstream();
    const { served } = await startGateway({ vault: { url: `${vault.url}/mcp`, headers: { 'X-Team': 'blue' }, bearerToken: 'upstream-bearer' } });
    const client = await connect(served);
    expect(await echo(client, 'vault__echo', 'hi')).toEqual([{ type: 'text', text: 'hi' }]);
    expect(vault.seen.length).toBeGreaterThan(2);
    expect(vault.seen.every((seen) => seen.headers['x-team'] === 'blue' && seen.headers.authorization === 'Bearer upstream-bearer')).toBe(true);
    expect(vault.seen.filter((seen) => seen.rpc === 'tools/call').map((seen) => seen.sessionId)).toEqual([vault.sessions[0]]);
  });
});

describe('credentials in upstream errors', () => {
  it('blanks the configured credentials out of an upstream error that quotes them', async () => {
    const quoting = await serve((req, res) => {
      res.writeHead(500, { 'content-type': 'text/plain' }).end(`refused ${req.headers.authorization} with ${req.headers['x-api-key']}`);
    });
    cleanup.push(() => quoting.close());
    const upstreams = createUpstreams({
      servers: { quoting: { url: `${quoting.url}/mcp`, bearerToken: 'bearer-c0ffee', headers: { 'x-api-key': 'key-deadbeef' } } },
    });
    cleanup.push(() => upstreams.close());
    const { quoting: state } = await upstreams.initialize(new AbortController().signal);
    expect(state?.down).toBe('Streamable HTTP error: Error POSTing to endpoint: refused [redacted] with [redacted]');
  });
});

describe('pooled connections', () => {
  it('keeps upstream connections in the gateway’s pool, which dispose() closes', async () => {
    const vault = await upstream();
    const sockets = new Set<Socket>();
    vault.server.on('connection', (socket: Socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    const gateway = await startGateway({ vault: { url: `${vault.url}/mcp` } });
    const client = await connect(gateway.served);
    await echo(client, 'vault__echo', 'pooled');
    await client.close();
    // Kept alive between requests…
    expect(sockets.size).toBeGreaterThan(0);
    await gateway.dispose();
    // …and closed with the gateway (a fetch on the global dispatcher would keep them open).
    await vi.waitFor(() => expect(sockets.size).toBe(0));
  });
});

describe('timeouts', () => {
  it('a tool call that outlasts the server’s timeoutMs fails with -32001; the client is told which server', async () => {
    const vault = await upstream();
    const { served } = await startGateway({ vault: { url: `${vault.url}/mcp`, timeoutMs: 500 } });
    const client = await connect(served);
    await expect(client.callTool({ name: 'vault__hang', arguments: {} })).rejects.toThrow('MCP error -32001: Server `vault` did not answer within 500 ms.');
    expect(await echo(client, 'vault__echo', 'still here')).toEqual([{ type: 'text', text: 'still here' }]);
  });

  /** A tool that reports progress every `everyMs` (when given a token) and answers after `ms`, or never. */
  const ticking = (server: McpServer) =>
    server.registerTool('ticking', { inputSchema: { ms: z.number().optional(), everyMs: z.number() } }, async ({ ms, everyMs }, extra) => {
      const progressToken = extra._meta?.progressToken;
      const started = Date.now();
      for (let step = 1; ms === undefined || Date.now() - started < ms; step++) {
        await new Promise((resolve) => setTimeout(resolve, everyMs));
        if (extra.signal.aborted) break;
        if (progressToken !== undefined) await extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress: step } });
      }
      return { content: [{ type: 'text', text: `ticked (token ${progressToken === undefined ? 'absent' : 'given'})` }] };
    });

  it('each progress notification starts the clock again: a long tool that reports progress outlives timeoutMs, whether the client asked for progress or not', async () => {
    const vault = await upstream({ tools: ticking });
    const { served } = await startGateway({ vault: { url: `${vault.url}/mcp`, timeoutMs: 500 } });
    const client = await connect(served);
    // Three times the timeout, with progress every fifth of it; the client sent no progress token.
    const result = await client.callTool({ name: 'vault__ticking', arguments: { ms: 1500, everyMs: 100 } });
    expect(result.content).toEqual([{ type: 'text', text: 'ticked (token given)' }]);
  });

  it('a tool that reports progress for ever still ends at maxTotalTimeoutMs, with -32001', async () => {
    const vault = await upstream({ tools: ticking });
    const { served } = await startGateway({ vault: { url: `${vault.url}/mcp`, timeoutMs: 500, maxTotalTimeoutMs: 1200 } });
    const client = await connect(served);
    await expect(client.callTool({ name: 'vault__ticking', arguments: { everyMs: 100 } })).rejects.toThrow(
      'MCP error -32001: Server `vault` did not answer within 1200 ms.',
    );
    expect(await echo(client, 'vault__echo', 'still here')).toEqual([{ type: 'text', text: 'still here' }]);
  });

  it('a maxTotalTimeoutMs shorter than its timeoutMs is refused at start, naming the server', () => {
    expect(() => createUpstreams({ servers: { vault: { url: 'http://127.0.0.1:9/mcp', timeoutMs: 5000, maxTotalTimeoutMs: 1000 } } })).toThrow(
      'mcp.servers.vault.maxTotalTimeoutMs must be at least its timeoutMs (5000)',
    );
  });

  it('a tool call that timed out is observed with the outcome timeout', async () => {
    const vault = await upstream();
    const events: { outcome: string; error?: string | undefined }[] = [];
    const instance = createGateway({
      providers: {},
      models: [],
      keys: [{ key: 'sk-mcp', id: 'mcp-key', mcp: ['*'] }],
      logger: false,
      mcp: { servers: { vault: { url: `${vault.url}/mcp`, timeoutMs: 500 } } },
      hooks: { onToolCall: (event) => void events.push(event) },
    });
    const served = await serve(instance as never);
    cleanup.push(async () => {
      await served.close();
      await instance.dispose();
    });
    const client = await connect(served);
    await expect(client.callTool({ name: 'vault__hang', arguments: {} })).rejects.toThrow(/-32001/);
    await vi.waitFor(() => expect(events).toMatchObject([{ outcome: 'timeout', error: 'Server `vault` did not answer within 500 ms.' }]));
  });

  it('isUpstreamTimeout tells a timeout from a cancellation', async () => {
    const vault = await upstream();
    const upstreams = createUpstreams({ servers: { vault: { url: `${vault.url}/mcp` } }, timeoutMs: 500 });
    cleanup.push(() => upstreams.close());
    const state = (await upstreams.initialize(new AbortController().signal)).vault;
    const hang = (signal: AbortSignal) =>
      upstreams.use('vault', state, signal, (client) => client.callTool({ name: 'hang', arguments: {} }, undefined, { signal }));
    const timedOut = await hang(new AbortController().signal).catch((error: unknown) => error);
    expect(isUpstreamTimeout(timedOut)).toBe(true);
    const cancelling = new AbortController();
    const cancelled = hang(cancelling.signal).catch((error: unknown) => error);
    cancelling.abort();
    expect(isUpstreamTimeout(await cancelled)).toBe(false);
  });

  it('an upstream that never answers initialize is down for the session after its timeout; the others serve', async () => {
    const vault = await upstream();
    const silent = await serve(() => {});
    cleanup.push(() => silent.close());
    const { logger, lines } = recordingLogger();
    const store = new MemoryMcpSessionStore();
    const { served } = await startGateway({ vault: { url: `${vault.url}/mcp` }, silent: { url: `${silent.url}/mcp`, timeoutMs: 500 } }, { store, logger });
    const client = await connect(served);
    expect((await client.listTools()).tools.map((tool) => tool.name).sort()).toEqual(['vault__echo', 'vault__hang']);
    expect(lines.find((line) => line.message === 'MCP server unavailable to a new session')?.fields).toEqual({
      server: 'silent',
      reason: 'Server `silent` did not answer within 500 ms.',
    });
  });
});

describe('an upstream that forgot the session', () => {
  it('is initialized again, once, the call runs there and the session keeps the new upstream session', async () => {
    const vault = await upstream();
    const store = new MemoryMcpSessionStore();
    const { served } = await startGateway({ vault: { url: `${vault.url}/mcp` } }, { store });
    const client = await connect(served);
    expect(await echo(client, 'vault__echo', 'before')).toEqual([{ type: 'text', text: 'before' }]);
    vault.restart();
    expect(await echo(client, 'vault__echo', 'after')).toEqual([{ type: 'text', text: 'after' }]);
    expect(await echo(client, 'vault__echo', 'again')).toEqual([{ type: 'text', text: 'again' }]);
    expect(vault.sessions).toHaveLength(2);
    const record = await store.get((client.transport as StreamableHTTPClientTransport).sessionId!);
    expect(record?.upstream.vault?.sessionId).toBe(vault.sessions[1]);
    // The renewed session is resumed with its protocol version.
    const last = vault.seen.at(-1)!;
    expect([last.sessionId, last.protocolVersion]).toEqual([vault.sessions[1], '2025-11-25']);
  });
});

describe('OAuth client credentials', () => {
  const SCOPE = 'mcp:tools';

  async function protectedUpstream(accepts: (token: string) => boolean) {
    return upstream({ authorize: (authorization) => authorization?.startsWith('Bearer ') === true && accepts(authorization.slice(7)) });
  }

  it('fetches a token with the client’s secret (HTTP Basic), sends it as the bearer, and reuses it across sessions', async () => {
    const tokens = await startTokenEndpoint({ scope: SCOPE });
    cleanup.push(() => tokens.close());
    const vault = await protectedUpstream(tokens.accepts);
    const { logger, lines } = recordingLogger();
    const oauth = { tokenUrl: `${tokens.url}/oauth/token`, clientId: tokens.clientId, clientSecret: tokens.clientSecret, scope: SCOPE };
    const { served } = await startGateway({ vault: { url: `${vault.url}/mcp`, oauth } }, { logger });
    for (const text of ['one', 'two']) expect(await echo(await connect(served), 'vault__echo', text)).toEqual([{ type: 'text', text }]);
    expect(tokens.requests).toEqual([{ auth: 'basic', form: { grant_type: 'client_credentials', scope: SCOPE } }]);
    expect(vault.seen.every((seen) => seen.headers.authorization === `Bearer ${tokens.issued[0]}`)).toBe(true);
    expect(JSON.stringify(lines)).not.toContain(tokens.issued[0]);
    expect(JSON.stringify(lines)).not.toContain(tokens.clientSecret);
  });

  it('sends the secret in the form with client_secret_post, and the audience', async () => {
    const tokens = await startTokenEndpoint({ scope: SCOPE, audience: 'https://tools.example.com' });
    cleanup.push(() => tokens.close());
    const vault = await protectedUpstream(tokens.accepts);
    const oauth = {
      tokenUrl: `${tokens.url}/oauth/token`,
      clientId: tokens.clientId,
      clientSecret: tokens.clientSecret,
      scope: SCOPE,
      audience: 'https://tools.example.com',
      authMethod: 'client_secret_post' as const,
    };
    const { served } = await startGateway({ vault: { url: `${vault.url}/mcp`, oauth } });
    expect(await echo(await connect(served), 'vault__echo', 'post')).toEqual([{ type: 'text', text: 'post' }]);
    expect(tokens.requests).toEqual([
      {
        auth: 'post',
        form: {
          grant_type: 'client_credentials',
          client_id: tokens.clientId,
          client_secret: tokens.clientSecret,
          scope: SCOPE,
          audience: 'https://tools.example.com',
          resource: 'https://tools.example.com',
        },
      },
    ]);
  });

  it('a token the upstream refuses (401) is replaced once and the request sent again', async () => {
    const tokens = await startTokenEndpoint({ scope: SCOPE });
    cleanup.push(() => tokens.close());
    const vault = await protectedUpstream(tokens.accepts);
    const oauth = { tokenUrl: `${tokens.url}/oauth/token`, clientId: tokens.clientId, clientSecret: tokens.clientSecret, scope: SCOPE };
    const { served } = await startGateway({ vault: { url: `${vault.url}/mcp`, oauth } });
    const client = await connect(served);
    tokens.revoke(tokens.issued[0]!);
    expect(await echo(client, 'vault__echo', 'renewed')).toEqual([{ type: 'text', text: 'renewed' }]);
    expect(tokens.issued).toHaveLength(2);
    expect(vault.seen.at(-1)?.headers.authorization).toBe(`Bearer ${tokens.issued[1]}`);
  });

  it('refreshes a token before it expires', async () => {
    const tokens = await startTokenEndpoint({ scope: SCOPE, expiresInS: 600 });
    cleanup.push(() => tokens.close());
    const vault = await protectedUpstream(tokens.accepts);
    const oauth = { tokenUrl: `${tokens.url}/oauth/token`, clientId: tokens.clientId, clientSecret: tokens.clientSecret, scope: SCOPE };
    // The clock is the token cache's; timers stay real.
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const upstreams = createUpstreams({ servers: { vault: { url: `${vault.url}/mcp`, oauth } } });
      cleanup.push(() => upstreams.close());
      await upstreams.initialize(new AbortController().signal);
      vi.setSystemTime(Date.now() + 600_000);
      await upstreams.initialize(new AbortController().signal);
    } finally {
      vi.useRealTimers();
    }
    expect(tokens.issued).toHaveLength(2);
    expect(vault.seen.at(-1)?.headers.authorization).toBe(`Bearer ${tokens.issued[1]}`);
  });

  it('sessions starting at once share one token request', async () => {
    const tokens = await startTokenEndpoint({ scope: SCOPE });
    cleanup.push(() => tokens.close());
    const vault = await protectedUpstream(tokens.accepts);
    const oauth = { tokenUrl: `${tokens.url}/oauth/token`, clientId: tokens.clientId, clientSecret: tokens.clientSecret, scope: SCOPE };
    const upstreams = createUpstreams({ servers: { vault: { url: `${vault.url}/mcp`, oauth } } });
    cleanup.push(() => upstreams.close());
    const states = await Promise.all([1, 2, 3].map(() => upstreams.initialize(new AbortController().signal)));
    expect(states.every((state) => state.vault?.sessionId !== undefined)).toBe(true);
    expect(tokens.requests).toHaveLength(1);
  });

  it('a wrong secret makes the server down for the session, the secret in no log line', async () => {
    const tokens = await startTokenEndpoint({ scope: SCOPE });
    cleanup.push(() => tokens.close());
    const vault = await protectedUpstream(tokens.accepts);
    const { logger, lines } = recordingLogger();
    const oauth = { tokenUrl: `${tokens.url}/oauth/token`, clientId: tokens.clientId, clientSecret: 'wrong-secret-93ab', scope: SCOPE };
    const { served } = await startGateway({ vault: { url: `${vault.url}/mcp`, oauth } }, { logger });
    const client = await connect(served);
    expect((await client.listTools()).tools).toEqual([]);
    expect(lines.find((line) => line.message === 'MCP server unavailable to a new session')?.fields).toEqual({
      server: 'vault',
      reason: 'The gateway could not authenticate to MCP server `vault`.',
      detail: "MCP server `vault` access token unavailable: the token endpoint refused the client's credentials (401).",
    });
    expect(JSON.stringify(lines)).not.toContain('wrong-secret-93ab');
    expect(vault.seen).toEqual([]);
  });
});
