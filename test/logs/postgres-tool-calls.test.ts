import { describe, expect, it, vi } from 'vitest';
import { MemoryRequestLog } from '../../src/logs/memory-request-log.js';
import type { PostgresRequestLog } from '../../src/logs/postgres-request-log.js';
import { DAY_MS, HOUR_MS } from '../../src/logs/stats-series.js';
import type { ToolCallRow } from '../../src/logs/tool-call-log.js';
import { logRow, toolCallRow } from './log-rows.js';
import { blackHole, postgresLogSuite, schemaOf } from './postgres-logs.js';

/** The request log's tool calls on a real PostgreSQL: the table, its queue, its reader, its retention. */

const suite = postgresLogSuite();
const { openLog } = suite;
const startDay = Date.now() - (Date.now() % DAY_MS);

async function countCalls(schema: string): Promise<number> {
  return Number((await suite.db.pool.query(`SELECT count(*) FROM "${schema}".infergate_tool_calls`)).rows[0].count);
}

/** Every tool call of the log, newest first, by following the cursor. */
async function everyCall(log: Pick<PostgresRequestLog, 'queryToolCalls'>, query: { limit: number } & Record<string, unknown>): Promise<ToolCallRow[]> {
  const rows: ToolCallRow[] = [];
  let cursor: string | undefined;
  do {
    const page = await log.queryToolCalls({ ...query, cursor });
    rows.push(...page.data);
    cursor = page.next;
  } while (cursor);
  return rows;
}

describe('PostgresRequestLog: tool calls', () => {
  it('writes tool calls and reads every field back; arguments only on rows that carry them', async () => {
    const log = openLog();
    const plain = toolCallRow({ startedAt: startDay + 1000 });
    const failed = toolCallRow({ startedAt: startDay + 2000, server: 'gone', tool: 'echo', outcome: 'upstream_error', error: 'connect ECONNREFUSED' });
    const withArguments = toolCallRow({ startedAt: startDay + 3000, arguments: { label: 'hi', nested: { n: 1, list: [true, null] } } });
    for (const row of [plain, failed, withArguments]) log.writeToolCall(row);
    await log.flush();
    expect((await log.queryToolCalls({ limit: 10 })).data).toEqual([withArguments, failed, plain]);
    const stored = await suite.db.pool.query(`SELECT id, arguments FROM "${schemaOf(log)}".infergate_tool_calls ORDER BY started_at`);
    expect(stored.rows.map((row) => row.arguments)).toEqual([null, null, withArguments.arguments]);
    expect(log.sinkStats()).toEqual({ written: 3, queued: 0, dropped: 0, failedBatches: 0, failedRows: 0 });
  });

  it('arguments jsonb would refuse (NUL, a lone surrogate) are written with U+FFFD, and so is the rest of the batch', async () => {
    const log = openLog();
    const odd = toolCallRow({ arguments: { text: 'a\u0000b', broken: '\ud800', escaped: '\\u0000', emoji: '😀', 'k\u0000': 1 } });
    const next = toolCallRow({ tool: `t\u0000${'x'.repeat(1000)}`, durationMs: 1.6, requestBytes: Number.NaN });
    // As deep as read-json lets a client's body be.
    let deep: unknown = 'bottom';
    for (let level = 0; level < 255; level++) deep = { level: deep };
    const nested = toolCallRow({ arguments: deep });
    for (const row of [odd, next, nested]) log.writeToolCall(row);
    await log.flush();
    expect(log.sinkStats()).toMatchObject({ written: 3, failedBatches: 0 });
    const rows = await everyCall(log, { limit: 10 });
    expect(rows.find((row) => row.id === odd.id)!.arguments).toEqual({ text: 'a\ufffdb', broken: '\ufffd', escaped: '\\u0000', emoji: '😀', 'k\ufffd': 1 });
    expect(rows.find((row) => row.id === nested.id)!.arguments).toEqual(deep);
    expect(rows.find((row) => row.id === next.id)).toMatchObject({ tool: `t${'x'.repeat(255)}`, durationMs: 2, requestBytes: 0 });
  });

  it('requests and tool calls share the batches; a batch written twice adds each row once', async () => {
    const log = openLog({ batchSize: 10, flushMs: 0 });
    const call = toolCallRow({ startedAt: startDay + 5 });
    const request = logRow({ startedAt: startDay + 5 });
    log.writeToolCall(call);
    log.write(request);
    log.writeToolCall(call);
    await log.flush();
    // Sent again as a retry would: nothing more.
    log.writeToolCall(call);
    await log.flush();
    expect(await countCalls(schemaOf(log))).toBe(1);
    expect(await log.get(request.requestId)).toEqual(request);
  });

  it('filters by key, server, tool, outcome and time, newest first, and pages across equal times', async () => {
    const log = openLog();
    const rows = Array.from({ length: 40 }, (_, n) =>
      toolCallRow({
        // Pairs of equal times: the cursor must keep its place among ties.
        startedAt: startDay + Math.floor(n / 2) * 1000,
        keyId: n % 2 ? 'key-a' : 'key-b',
        server: n % 4 < 2 ? 'vault' : 'github',
        tool: n % 3 ? 'reveal' : 'search',
        outcome: n % 5 ? 'ok' : 'timeout',
      }),
    );
    for (const row of rows) log.writeToolCall(row);
    await log.flush();
    const newestFirst = (picked: ToolCallRow[]) => [...picked].sort((a, b) => b.startedAt - a.startedAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    expect(await everyCall(log, { limit: 3 })).toEqual(newestFirst(rows));
    const from = startDay + 5000;
    const to = startDay + 15_000;
    const filters = { keyId: 'key-a', server: 'vault', tool: 'reveal', outcome: 'ok' } as const;
    expect(await everyCall(log, { limit: 2, ...filters, from, to })).toEqual(
      newestFirst(
        rows.filter(
          (row) =>
            row.keyId === 'key-a' && row.server === 'vault' && row.tool === 'reveal' && row.outcome === 'ok' && row.startedAt >= from && row.startedAt < to,
        ),
      ),
    );
    expect((await log.queryToolCalls({ limit: 50, outcome: 'timeout' })).data).toHaveLength(8);
    // MemoryRequestLog answers the same.
    const memory = new MemoryRequestLog();
    for (const row of rows) memory.writeToolCall(row);
    for (const query of [{ limit: 3 }, { limit: 2, ...filters, from, to }, { limit: 4, server: 'github', outcome: 'timeout' as const }]) {
      expect(await everyCall(memory, query)).toEqual(await everyCall(log, query));
    }
    await expect(log.queryToolCalls({ limit: 5, cursor: 'not-a-cursor' })).rejects.toThrow(/cursor/i);
  });

  it('a database made before tool calls were kept gains the table, its rows untouched', async () => {
    const schema = suite.newSchema();
    const before = openLog({}, schema);
    const request = logRow({ startedAt: startDay + 7 });
    before.write(request);
    await before.flush();
    // The schema as the previous version made it: the same tables, without the tool calls'.
    await suite.db.pool.query(`DROP TABLE "${schema}".infergate_tool_calls`);
    const after = openLog({}, schema);
    const call = toolCallRow({ startedAt: startDay + 8 });
    after.writeToolCall(call);
    await after.flush();
    expect(after.sinkStats()).toMatchObject({ written: 1, failedBatches: 0 });
    expect((await after.queryToolCalls({ limit: 5 })).data).toEqual([call]);
    expect(await after.get(request.requestId)).toEqual(request);
  });

  it('drops the tool calls past retention with the requests', async () => {
    const schema = suite.newSchema();
    const longer = openLog({ retentionDays: 100 }, schema);
    const old = toolCallRow({ startedAt: startDay - 40 * DAY_MS + HOUR_MS });
    const recent = toolCallRow({ startedAt: startDay - 2 * DAY_MS + HOUR_MS });
    longer.writeToolCall(old);
    longer.writeToolCall(recent);
    await longer.flush();
    expect(await countCalls(schema)).toBe(2);
    // Another instance keeping 30 days: its first batch drops what is older, a tool call alone included.
    const shorter = openLog({ retentionDays: 30 }, schema);
    shorter.writeToolCall(toolCallRow({ startedAt: startDay + 1 }));
    await shorter.flush();
    expect((await everyCall(shorter, { limit: 10 })).map((row) => row.id)).not.toContain(old.id);
    expect(await countCalls(schema)).toBe(2);
  });

  it('a stalled database: tool calls fill their bounded queue, the overflow is dropped and counted, the rest written after', async () => {
    const log = openLog({ batchSize: 5, toolCallQueueSize: 10, flushMs: 0 });
    log.writeToolCall(toolCallRow());
    await log.flush();
    const locker = await suite.db.pool.connect();
    await locker.query('BEGIN');
    await locker.query(`LOCK TABLE "${schemaOf(log)}".infergate_tool_calls IN ACCESS EXCLUSIVE MODE`);
    const results = Array.from({ length: 30 }, () => log.writeToolCall(toolCallRow()));
    expect(results.every((result) => result === undefined)).toBe(true);
    expect(log.sinkStats()).toMatchObject({ written: 1, queued: 10, dropped: 20 });
    await locker.query('ROLLBACK');
    locker.release();
    await log.flush();
    expect(log.sinkStats()).toEqual({ written: 11, queued: 0, dropped: 20, failedBatches: 0, failedRows: 0 });
    expect(await countCalls(schemaOf(log))).toBe(11);
  });

  it('a burst of tool calls never crowds request rows out: each kind has its own queue, and requests are written while tool calls stall', async () => {
    const log = openLog({ batchSize: 5, queueSize: 10, toolCallQueueSize: 10, flushMs: 0 });
    log.writeToolCall(toolCallRow());
    log.write(logRow());
    await log.flush();
    const locker = await suite.db.pool.connect();
    await locker.query('BEGIN');
    await locker.query(`LOCK TABLE "${schemaOf(log)}".infergate_tool_calls IN ACCESS EXCLUSIVE MODE`);
    try {
      for (let n = 0; n < 100; n++) log.writeToolCall(toolCallRow());
      const requests = Array.from({ length: 8 }, () => logRow());
      for (const row of requests) expect(log.write(row)).toBeUndefined();
      // The tool calls wait on the lock; the request rows do not wait behind them.
      await vi.waitFor(async () => {
        const { rows } = await suite.db.pool.query(`SELECT count(*) FROM "${schemaOf(log)}".infergate_requests`);
        expect(Number(rows[0].count)).toBe(9);
      });
      expect(log.sinkStats()).toMatchObject({ dropped: 90 });
    } finally {
      await locker.query('ROLLBACK');
      locker.release();
    }
    await log.flush();
    expect(log.sinkStats()).toEqual({ written: 20, queued: 0, dropped: 90, failedBatches: 0, failedRows: 0 });
    expect(await countCalls(schemaOf(log))).toBe(11);
  });

  it('a server that accepts and never answers: writes return at once, the overflow is dropped, hung batches are given up', async () => {
    const database = await blackHole();
    const log = openLog({ url: database.url, batchSize: 5, toolCallQueueSize: 10, flushMs: 0, writeTimeoutMs: 20 });
    for (let n = 0; n < 25; n++) expect(log.writeToolCall(toolCallRow())).toBeUndefined();
    expect(log.sinkStats()).toMatchObject({ written: 0, queued: 10, dropped: 15 });
    await log.flush();
    expect(log.sinkStats()).toEqual({ written: 0, queued: 0, dropped: 15, failedBatches: 2, failedRows: 10 });
    database.close();
    await log.close();
  });
});
