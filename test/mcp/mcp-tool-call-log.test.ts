import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { RequestListener } from 'node:http';
import { createAdminHandler } from '../../src/admin/admin-handler.js';
import { MemoryKeyStore } from '../../src/admin/keys/memory-key-store.js';
import { createGateway } from '../../src/gateway.js';
import type { PostgresRequestLog, PostgresRequestLogOptions } from '../../src/logs/postgres-request-log.js';
import type { McpToolCallEvent } from '../../src/mcp/tool-call-event.js';
import { recordingLogger } from '../helpers/recording-logger.js';
import { freePort, serve } from '../helpers/serve.js';
import { blackHole, postgresLogSuite, schemaOf } from '../logs/postgres-logs.js';
import { type HttpUpstream, startHttpUpstream } from './fixtures/http-upstream.js';

/**
 * Tool calls kept durably: the SDK's client through the gateway's `/mcp` to an SDK-built upstream,
 * with `PostgresRequestLog` as the request log; each call becomes a row of `infergate_tool_calls`
 * with the event's fields, the arguments only with `captureArguments`, and a database that is
 * down neither fails nor holds a call.
 */

const CLIENT_KEY = 'sk-toollog-client';
const ARGUMENT = 'private-argument-e81c';
const suite = postgresLogSuite();
let upstream: HttpUpstream;
let dead: string;

beforeAll(async () => {
  upstream = await startHttpUpstream();
  dead = `http://127.0.0.1:${await freePort()}/mcp`;
});
afterAll(async () => {
  await upstream?.close();
});

interface LoggedGateway {
  url: string;
  log: PostgresRequestLog;
  events: McpToolCallEvent[];
  /** A GET of the admin API mounted beside the gateway, with its key. */
  admin(path: string): Promise<Response>;
  close(): Promise<void>;
}

const ADMIN_KEY = 'admin-key-toollog-0123456789';

async function loggedGateway(log: Partial<PostgresRequestLogOptions>, captureArguments = false): Promise<LoggedGateway> {
  const requestLog = suite.openLog({ flushMs: 0, ...log });
  const events: McpToolCallEvent[] = [];
  const instance = createGateway({
    providers: {},
    models: [],
    keys: [{ key: CLIENT_KEY, id: 'log-key', group: 'tools-team', mcp: ['vault__echo', 'gone'] }],
    mcp: { servers: { vault: { url: `${upstream.url}/mcp` }, gone: { url: dead } }, captureArguments },
    hooks: { onToolCall: (event) => void events.push(event) },
    logger: recordingLogger().logger,
    requestLog,
  });
  const adminHandler = createAdminHandler({ key: ADMIN_KEY, keys: new MemoryKeyStore(), log: requestLog, logger: false });
  const served = await serve((req, res) => (req.url?.startsWith('/admin') ? adminHandler(req, res) : (instance as never as RequestListener)(req, res)));
  return {
    url: served.url,
    log: requestLog,
    events,
    admin: (path) => fetch(`${served.url}/admin${path}`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } }),
    close: async () => {
      await served.close();
      await requestLog.close();
    },
  };
}

async function connect(url: string): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const client = new Client({ name: 'test', version: '1' });
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${CLIENT_KEY}` } } });
  await client.connect(transport);
  return { client, transport };
}

describe('tool calls in the PostgreSQL request log', () => {
  it('each call through /mcp is a row with the event’s fields, without arguments', async () => {
    const gateway = await loggedGateway({});
    try {
      const { client, transport } = await connect(gateway.url);
      const result = await client.callTool({ name: 'vault__echo', arguments: { text: ARGUMENT } });
      expect(result.content).toEqual([{ type: 'text', text: ARGUMENT }]);
      await expect(client.callTool({ name: 'vault__secret', arguments: { text: ARGUMENT } })).rejects.toThrow(/Unknown tool/);
      await expect(client.callTool({ name: 'gone__echo', arguments: { text: ARGUMENT } })).rejects.toThrow();
      await client.close();
      await vi.waitFor(() => expect(gateway.events).toHaveLength(3));
      await gateway.log.flush();
      // Matched to their events by request id (each call is its own POST): two may share a millisecond.
      const rows = (await gateway.log.queryToolCalls({ limit: 10 })).data;
      const rowOf = (event: McpToolCallEvent) => rows.find((row) => row.requestId === event.requestId);
      expect(gateway.events.map((event) => [event.server, event.tool, event.outcome])).toEqual([
        ['vault', 'echo', 'ok'],
        ['vault', 'secret', 'refused'],
        ['gone', 'echo', 'upstream_error'],
      ]);
      expect(rows).toHaveLength(3);
      for (const event of gateway.events) {
        expect(rowOf(event)).toEqual({
          id: expect.stringMatching(/^tcall_[0-9a-f]{24}$/),
          startedAt: Math.round(event.startedAt),
          requestId: event.requestId,
          keyId: 'log-key',
          keyGroup: 'tools-team',
          sessionId: transport.sessionId,
          protocolVersion: transport.protocolVersion,
          server: event.server,
          tool: event.tool,
          outcome: event.outcome,
          durationMs: Math.round(event.durationMs),
          requestBytes: event.requestBytes,
          responseBytes: event.responseBytes,
          error: event.error ?? null,
        });
      }
      expect(rowOf(gateway.events[2]!)!.error).toEqual(expect.any(String));
      const stored = await suite.db.pool.query(`SELECT arguments FROM "${schemaOf(gateway.log)}".infergate_tool_calls`);
      expect(stored.rows.map((row) => row.arguments)).toEqual([null, null, null]);
      expect(JSON.stringify(rows)).not.toContain(ARGUMENT);
    } finally {
      await gateway.close();
    }
  });

  it('with captureArguments, the row keeps the call’s arguments', async () => {
    const gateway = await loggedGateway({}, true);
    try {
      const { client } = await connect(gateway.url);
      await client.callTool({ name: 'vault__echo', arguments: { text: ARGUMENT } });
      await client.close();
      await vi.waitFor(() => expect(gateway.events).toHaveLength(1));
      await gateway.log.flush();
      const [row] = (await gateway.log.queryToolCalls({ limit: 10 })).data;
      expect(row).toMatchObject({ server: 'vault', tool: 'echo', outcome: 'ok', arguments: { text: ARGUMENT } });
    } finally {
      await gateway.close();
    }
  });

  it('GET /admin/tool-calls lists them newest first, filtered by key, server, tool, outcome and time, page by page', async () => {
    const gateway = await loggedGateway({});
    try {
      const { client } = await connect(gateway.url);
      for (const text of ['one', 'two', 'three']) await client.callTool({ name: 'vault__echo', arguments: { text } });
      await expect(client.callTool({ name: 'vault__secret', arguments: {} })).rejects.toThrow(/Unknown tool/);
      await client.close();
      await vi.waitFor(() => expect(gateway.events).toHaveLength(4));
      await gateway.log.flush();
      type Listed = { object: string; data: { id: string; requestId: string; tool: string; outcome: string; startedAt: number }[]; next?: string };
      const list = async (query: string) => {
        const response = await gateway.admin(`/tool-calls?${query}`);
        expect(response.status).toBe(200);
        return (await response.json()) as Listed;
      };
      const all = await list('');
      expect(all.object).toBe('list');
      expect(all.data.map((row) => row.requestId).sort()).toEqual(gateway.events.map((event) => event.requestId).sort());
      const times = all.data.map((row) => row.startedAt);
      expect(times).toEqual([...times].sort((a, b) => b - a));
      expect((await list('outcome=refused')).data.map((row) => row.tool)).toEqual(['secret']);
      expect((await list('server=vault&tool=echo&outcome=ok&keyId=log-key')).data).toHaveLength(3);
      expect((await list('keyId=someone-else')).data).toEqual([]);
      const since = gateway.events[1]!.startedAt;
      expect((await list(`tool=echo&from=${Math.round(since)}`)).data.length).toBeGreaterThanOrEqual(2);
      expect((await list(`to=${Math.round(gateway.events[0]!.startedAt)}`)).data).toEqual([]);
      // Page by page: the same rows, in the same order.
      const paged: Listed['data'] = [];
      let page = await list('limit=1');
      paged.push(...page.data);
      while (page.next) {
        page = await list(`limit=1&cursor=${page.next}`);
        paged.push(...page.data);
      }
      expect(paged).toEqual(all.data);
      const refused = await gateway.admin('/tool-calls?outcome=lost');
      expect(refused.status).toBe(400);
      expect(((await refused.json()) as { error: { param: string } }).error.param).toBe('outcome');
    } finally {
      await gateway.close();
    }
  });

  it('a database that never answers: calls are answered, the queue stays at its bound, the rest is dropped and counted', async () => {
    const database = await blackHole();
    // Writes never finish within the test: a call waiting on one would never be answered.
    const gateway = await loggedGateway({ url: database.url, batchSize: 2, toolCallQueueSize: 4, writeTimeoutMs: 600_000 });
    try {
      const { client } = await connect(gateway.url);
      for (let n = 0; n < 10; n++) {
        const result = await client.callTool({ name: 'vault__echo', arguments: { text: `call ${n}` } });
        expect(result.content).toEqual([{ type: 'text', text: `call ${n}` }]);
      }
      await client.close();
      await vi.waitFor(() => expect(gateway.events).toHaveLength(10));
      await vi.waitFor(() => expect(gateway.log.sinkStats()).toMatchObject({ written: 0, queued: 4, dropped: 6 }));
    } finally {
      database.close();
      await gateway.close();
    }
  });
});
