import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { MemoryRequestLog } from '../../src/logs/memory-request-log.js';
import { logQuerySql, type PostgresRequestLog } from '../../src/logs/postgres-request-log.js';
import type { LogQuery, RequestLogRow } from '../../src/logs/request-log.js';
import { DAY_MS, HOUR_MS } from '../../src/logs/stats-series.js';
import { utcDay } from '../../src/state/usage-store.js';
import { recordingLogger } from '../helpers/recording-logger.js';
import { errorRow, logRow } from './log-rows.js';
import { blackHole, postgresLogSuite, schemaOf } from './postgres-logs.js';

const suite = postgresLogSuite();
const { openLog } = suite;
/** The start of the UTC day the suite started: one day for every test, even one running across midnight. */
const startDay = Date.now() - (Date.now() % DAY_MS);
const today = () => startDay;

async function count(log: PostgresRequestLog): Promise<number> {
  return Number((await suite.db.pool.query(`SELECT count(*) FROM "${schemaOf(log)}".infergate_requests`)).rows[0].count);
}

/** The rollups, and the same sums computed from the raw rows: they must be equal. */
async function rollupsAndRawSums(log: PostgresRequestLog) {
  const schema = schemaOf(log);
  const sums = `requests::float8, errors::float8, input_tokens::float8, output_tokens::float8, cached_input_tokens::float8, cost_usd::float8, latency_ms_sum::float8`;
  const rollups = await suite.db.pool.query(
    `SELECT to_char(day, 'YYYY-MM-DD') AS day, key_id, key_group, model, ${sums} FROM "${schema}".infergate_usage_daily ORDER BY 1, 2, 3, 4`,
  );
  const raw = await suite.db.pool.query(
    `SELECT to_char(day, 'YYYY-MM-DD') AS day, key_id, key_group, model, ${sums} FROM (
       SELECT (started_at AT TIME ZONE 'UTC')::date AS day, key_id, key_group, model, count(*) AS requests, count(*) FILTER (WHERE status = 'error') AS errors,
         sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens, sum(cached_input_tokens) AS cached_input_tokens,
         sum(cost_usd) AS cost_usd, sum(latency_ms) AS latency_ms_sum
       FROM "${schema}".infergate_requests GROUP BY 1, 2, 3, 4) AS sums ORDER BY 1, 2, 3, 4`,
  );
  return { rollups: rollups.rows, raw: raw.rows };
}

/** Holds a lock the log's writes need (after its tables are made), until the returned function is called. */
async function stall(log: PostgresRequestLog): Promise<() => Promise<void>> {
  log.write(logRow());
  await log.flush();
  const locker = await suite.db.pool.connect();
  await locker.query('BEGIN');
  await locker.query(`LOCK TABLE "${schemaOf(log)}".infergate_usage_daily IN ACCESS EXCLUSIVE MODE`);
  return async () => {
    await locker.query('ROLLBACK');
    locker.release();
  };
}

function shuffled<T>(items: readonly T[], seed: number): T[] {
  const copy = [...items];
  let state = seed;
  for (let index = copy.length - 1; index > 0; index--) {
    state = (state * 1103515245 + 12345) % 2147483648;
    const other = state % (index + 1);
    [copy[index], copy[other]] = [copy[other]!, copy[index]!];
  }
  return copy;
}

describe('PostgresRequestLog', () => {
  it('writes rows and reads every field back', async () => {
    const log = openLog();
    const ok = logRow({ startedAt: today() + 1234, overheadMs: 1.25, costUsd: 0.000123 });
    const failed = errorRow({ startedAt: today() + 5678, keyId: 'key-b', routeReason: null, overheadMs: null });
    log.write(ok);
    log.write(failed);
    await log.flush();
    expect(await log.get(ok.requestId)).toEqual(ok);
    expect(await log.get(failed.requestId)).toEqual(failed);
    expect(await log.get('req_missing')).toBeUndefined();
    expect(log.sinkStats()).toEqual({ written: 2, queued: 0, dropped: 0, failedBatches: 0, failedRows: 0 });
    await Promise.all([log.close(), log.close()]);
    await log.close();
  });

  it('keeps captured prompts and answers: read back by get, left out of lists', async () => {
    const log = openLog();
    const content = { request: '{"messages":[{"role":"user","content":"hi \u0000there"}]}', response: 'Hello back' };
    const withContent = logRow({ startedAt: today() + 10, content });
    const onlyPrompt = logRow({ startedAt: today() + 20, content: { request: 'just the prompt' } });
    const without = logRow({ startedAt: today() + 30 });
    for (const row of [withContent, onlyPrompt, without]) log.write(row);
    await log.flush();
    // PostgreSQL's text takes no NUL: dropped, the rest kept.
    expect(await log.get(withContent.requestId)).toEqual({ ...withContent, content: { ...content, request: content.request.replace('\u0000', '') } });
    expect(await log.get(onlyPrompt.requestId)).toEqual(onlyPrompt);
    expect(await log.get(without.requestId)).toEqual(without);
    const listed = (await log.query({ limit: 10 })).data;
    expect(listed).toHaveLength(3);
    for (const row of listed) expect(row).not.toHaveProperty('content');
  });

  it("keeps the guardrails' outcomes, in lists too; a table made before them gains the column", async () => {
    const log = openLog();
    const guarded = logRow({ startedAt: today() + 40, guardrails: ['pii:input:masked:email,phone', 'moderation:output:passed'] });
    const plain = logRow({ startedAt: today() + 50 });
    log.write(guarded);
    log.write(plain);
    await log.flush();
    expect(await log.get(guarded.requestId)).toEqual(guarded);
    expect(await log.get(plain.requestId)).toEqual(plain);
    expect((await log.query({ limit: 10 })).data).toEqual([plain, guarded]);

    // The same schema as an older version left it: no guardrails column. A new instance adds it.
    await suite.db.pool.query(`ALTER TABLE "${schemaOf(log)}".infergate_requests DROP COLUMN guardrails`);
    const upgraded = openLog({}, schemaOf(log));
    const later = logRow({ startedAt: today() + 60, guardrails: ['secrets:output:blocked:api_key'] });
    upgraded.write(later);
    await upgraded.flush();
    expect(upgraded.sinkStats()).toMatchObject({ written: 1, failedBatches: 0 });
    expect(await upgraded.get(later.requestId)).toEqual(later);
  });

  it('a row PostgreSQL would refuse as it is (NUL, a huge model id, fractions, NaN) is written, and so is the rest of its batch', async () => {
    const log = openLog();
    const odd = errorRow({
      model: `x\u0000${'m'.repeat(5000)}`,
      errorMessage: 'bad \u0000 byte',
      inputTokens: 1.5,
      costUsd: Number.NaN,
      latencyMs: 12.7,
      overheadMs: Number.POSITIVE_INFINITY,
    });
    const plain = logRow();
    log.write(odd);
    log.write(plain);
    await log.flush();
    expect(log.sinkStats()).toMatchObject({ written: 2, failedBatches: 0 });
    expect(await log.get(plain.requestId)).toEqual(plain);
    expect(await log.get(odd.requestId)).toMatchObject({
      model: `x${'m'.repeat(255)}`,
      errorMessage: 'bad  byte',
      inputTokens: 2,
      costUsd: 0,
      latencyMs: 13,
      overheadMs: 0,
    });
  });

  it('a batch retried after its statement committed (the answer lost) writes its rows and rollups once', async () => {
    const pool = new pg.Pool({ connectionString: suite.db.url, max: 2 });
    const query = pool.query.bind(pool) as (...args: unknown[]) => Promise<unknown>;
    let lost = 0;
    (pool as unknown as { query: unknown }).query = async (...args: unknown[]) => {
      const result = await query(...args);
      if (String(args[0]).includes('WITH inserted') && lost++ === 0) throw new Error('Connection terminated unexpectedly');
      return result;
    };
    const log = openLog({ pool, url: undefined });
    const rows = Array.from({ length: 5 }, () => logRow({ startedAt: today() + 1 }));
    for (const row of rows) log.write(row);
    await log.flush();
    expect(lost).toBe(2);
    expect(log.sinkStats()).toEqual({ written: 5, queued: 0, dropped: 0, failedBatches: 1, failedRows: 0 });
    expect(await count(log)).toBe(5);
    const { rollups, raw } = await rollupsAndRawSums(log);
    expect(rollups).toEqual(raw);
    expect(rollups).toMatchObject([{ requests: 5, cost_usd: 1.25 }]);
    await log.close();
    await pool.end();
  });

  it('rollups equal the sums of the raw rows, with request ids resent in one batch and in later ones', async () => {
    const log = openLog({ batchSize: 10 });
    const rows = [
      ...Array.from({ length: 30 }, (_, n) =>
        logRow({ keyId: `key-${n % 3}`, model: `m${n % 2}`, startedAt: today() - (n % 2) * DAY_MS + n, costUsd: 0.125 * n }),
      ),
      ...Array.from({ length: 6 }, (_, n) => errorRow({ keyId: `key-${n % 3}`, startedAt: today() + n })),
    ];
    for (const row of [...rows, rows[0]!, rows[1]!]) log.write(row);
    await log.flush();
    for (const row of rows.slice(0, 12)) log.write({ ...row });
    await log.flush();
    expect(await count(log)).toBe(36);
    const { rollups, raw } = await rollupsAndRawSums(log);
    expect(rollups).toEqual(raw);
    expect(rollups.reduce((sum, row) => sum + row.requests, 0)).toBe(36);
    expect(rollups.reduce((sum, row) => sum + row.errors, 0)).toBe(6);
  });

  it('three instances writing the same rollup rows at once: no deadlock, exact totals', async () => {
    const schema = suite.newSchema();
    const first = openLog({ batchSize: 20, maxConnections: 4 }, schema);
    const second = openLog({ batchSize: 20, maxConnections: 4 }, schema);
    const third = openLog({ batchSize: 20, maxConnections: 4 }, schema);
    // Each sees 1,500 shared rows (in different orders: a resend) and 500 of their own, in small batches hitting the same rollup rows.
    const shared = Array.from({ length: 1500 }, (_, n) =>
      logRow({ keyId: `key-${n % 4}`, keyGroup: `g${n % 2}`, model: `m${n % 3}`, startedAt: today() + (n % 7), costUsd: 0.5 }),
    );
    const own = (tag: string) =>
      Array.from({ length: 500 }, (_, n) =>
        logRow({ keyId: `key-${n % 4}`, keyGroup: `g${n % 2}`, model: `m${n % 3}`, startedAt: today() + n, costUsd: 0.25, requestId: `req_${tag}_${n}` }),
      );
    const feed = async (log: PostgresRequestLog, rows: RequestLogRow[]) => {
      for (const [index, row] of rows.entries()) {
        log.write(row);
        if (index % 100 === 99) await new Promise((resolve) => setImmediate(resolve));
      }
      await log.flush();
    };
    await Promise.all([
      feed(first, shuffled([...shared, ...own('a')], 1)),
      feed(second, shuffled([...shared, ...own('b')], 2)),
      feed(third, shuffled([...shared, ...own('c')], 3)),
    ]);
    expect([first, second, third].map((log) => log.sinkStats().failedBatches)).toEqual([0, 0, 0]);
    expect(await count(first)).toBe(3000);
    const { rollups, raw } = await rollupsAndRawSums(first);
    expect(rollups).toEqual(raw);
    expect(rollups.reduce((sum, row) => sum + row.requests, 0)).toBe(3000);
    expect(rollups.reduce((sum, row) => sum + row.cost_usd, 0)).toBe(1500 * 0.5 + 1500 * 0.25);
  });

  it('makes a partition per UTC day the rows need, and drops the days past retention', async () => {
    const schema = suite.newSchema();
    const days = [0, 1, 2, 40].map((back) => today() - back * DAY_MS);
    const longer = openLog({ retentionDays: 100 }, schema);
    for (const day of days) longer.write(logRow({ startedAt: day + 5 * HOUR_MS }));
    await longer.flush();
    const partitions = async () =>
      (
        await suite.db.pool.query(
          `SELECT child.relname AS name FROM pg_inherits JOIN pg_class child ON child.oid = inhrelid
             JOIN pg_class parent ON parent.oid = inhparent JOIN pg_namespace ns ON ns.oid = parent.relnamespace
           WHERE ns.nspname = $1 AND parent.relname = 'infergate_requests' ORDER BY 1`,
          [schema],
        )
      ).rows.map((row) => row.name as string);
    const named = (day: number) => `infergate_requests_${utcDay(day).replaceAll('-', '')}`;
    expect(await partitions()).toEqual([...days.map(named).sort(), 'infergate_requests_default'].sort());
    expect(Number((await suite.db.pool.query(`SELECT count(*) FROM "${schema}".infergate_requests_default`)).rows[0].count)).toBe(0);
    // Another instance keeping 30 days drops the 40-day-old partition; its rollups stay.
    const shorter = openLog({ retentionDays: 30 }, schema);
    shorter.write(logRow({ startedAt: today() + 1 }));
    await shorter.flush();
    expect(await partitions()).toEqual([...days.slice(0, 3).map(named), 'infergate_requests_default'].sort());
    expect(await count(shorter)).toBe(4);
    const rollupDays = (
      await suite.db.pool.query(`SELECT DISTINCT to_char(day, 'YYYY-MM-DD') AS day FROM "${schema}".infergate_usage_daily ORDER BY 1`)
    ).rows.map((row) => row.day);
    expect(rollupDays).toContain(utcDay(days[3]!));
  });

  it('moves rows that landed in the DEFAULT partition into their day when it is made', async () => {
    const log = openLog();
    const schema = schemaOf(log);
    log.write(logRow({ startedAt: today() }));
    await log.flush();
    // A row of tomorrow written while its partition did not exist (another instance's, or by hand).
    const stray = logRow({ startedAt: today() + DAY_MS + 1 });
    await suite.db.pool.query(
      `INSERT INTO "${schema}".infergate_requests_default (request_id, started_at, key_id, key_group, endpoint, kind, stream, model, deployment, provider,
         upstream_model, status, http_status, cancelled, cached, input_tokens, output_tokens, cached_input_tokens, cache_write_tokens, reasoning_tokens,
         cost_usd, latency_ms, attempts)
       VALUES ($1, $2, 'key-a', 'team', '/v1/chat/completions', 'text', false, 'gpt-test', 'd', 'openai', 'u', 'ok', 200, false, false, 1, 1, 0, 0, 0, 0, 1, 1)`,
      [stray.requestId, new Date(stray.startedAt)],
    );
    log.write(logRow({ startedAt: today() + DAY_MS + 2 }));
    await log.flush();
    expect(log.sinkStats().failedBatches).toBe(0);
    const where = (
      await suite.db.pool.query(`SELECT tableoid::regclass::text AS part FROM "${schema}".infergate_requests WHERE request_id = $1`, [stray.requestId])
    ).rows;
    expect(where).toEqual([{ part: `${schema}.infergate_requests_${utcDay(today() + DAY_MS).replaceAll('-', '')}` }]);
  });

  it('query: the same filters, order and pages as MemoryRequestLog, across pages of equal times', async () => {
    const log = openLog({ batchSize: 7 });
    const memory = new MemoryRequestLog();
    const at = today() + 3 * HOUR_MS;
    const rows = Array.from({ length: 40 }, (_, n) =>
      (n % 5 === 0 ? errorRow : logRow)({
        keyId: `key-${n % 3}`,
        model: `m${n % 2}`,
        startedAt: at + Math.floor(n / 8) * 1000,
        httpStatus: n % 5 === 0 ? 429 : 200,
      }),
    );
    for (const row of shuffled(rows, 3)) {
      log.write(row);
      memory.write(row);
    }
    await log.flush();
    const pages = async (reader: PostgresRequestLog | MemoryRequestLog, filters: Partial<LogQuery>, limit: number) => {
      const seen: string[][] = [];
      let cursor: string | undefined;
      do {
        const page = await reader.query({ ...filters, limit, cursor });
        seen.push(page.data.map((row) => row.requestId));
        cursor = page.next;
      } while (cursor);
      return seen;
    };
    for (const filters of [
      {},
      { keyId: 'key-1' },
      { model: 'm0', status: 'ok' as const },
      { status: 'error' as const },
      { status: 429 },
      { from: at + 1000, to: at + 3000 },
    ]) {
      const expected = await pages(memory, filters, 3);
      expect(await pages(log, filters, 3)).toEqual(expected);
      expect(expected.flat().length).toBeGreaterThan(0);
    }
    const all = await pages(log, {}, 4);
    expect(all).toHaveLength(10);
    expect(new Set(all.flat()).size).toBe(40);
  });

  it('stats: the same series, totals and percentiles as MemoryRequestLog, by hour from rows and by day from rollups', async () => {
    const log = openLog();
    const memory = new MemoryRequestLog();
    const start = today() - 2 * DAY_MS;
    for (let n = 0; n < 120; n++) {
      const row = (n % 9 === 0 ? errorRow : logRow)({
        keyId: `key-${n % 13}`,
        model: `m${n % 4}`,
        startedAt: start + ((n * 37) % 60) * HOUR_MS + n,
        costUsd: (n % 8) * 0.125,
        inputTokens: n,
        outputTokens: 2 * n,
        latencyMs: 10 * n,
        ttftMs: n % 3 === 0 ? null : n,
      });
      log.write(row);
      memory.write(row);
    }
    await log.flush();
    for (const query of [
      { from: start, to: start + 2 * DAY_MS, bucket: 'hour' as const, by: 'model' as const },
      { from: start + 30 * 60_000, to: start + DAY_MS, bucket: 'hour' as const, by: 'key' as const, model: 'm1' },
      { from: start, to: today() + DAY_MS, bucket: 'day' as const, by: 'key' as const },
      { from: start, to: today() + DAY_MS, bucket: 'day' as const, by: 'model' as const, keyId: 'key-3' },
    ]) {
      const expected = await memory.stats(query);
      expect(expected.totals.requests).toBeGreaterThan(0);
      expect(await log.stats(query)).toEqual(expected);
    }
  });

  it('drop: a stalled database fills the queue, further rows are dropped and counted, the rest written when it answers', async () => {
    const log = openLog({ batchSize: 5, queueSize: 10, flushMs: 0 });
    const release = await stall(log);
    const results = Array.from({ length: 30 }, () => log.write(logRow({ startedAt: today() + 1 })));
    expect(results.every((result) => result === undefined)).toBe(true);
    expect(log.sinkStats()).toMatchObject({ written: 1, queued: 10, dropped: 20 });
    await release();
    await log.flush();
    expect(log.sinkStats()).toEqual({ written: 11, queued: 0, dropped: 20, failedBatches: 0, failedRows: 0 });
    expect(await count(log)).toBe(11);
  });

  it('wait: a stalled database holds the writers beyond the queue, and every row is written when it answers', async () => {
    const log = openLog({ batchSize: 5, queueSize: 10, flushMs: 0, overflow: 'wait' });
    const release = await stall(log);
    let admitted = 0;
    const writes = Array.from({ length: 30 }, () => Promise.resolve(log.write(logRow({ startedAt: today() + 1 }))).then(() => admitted++));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(admitted).toBe(10);
    expect(log.sinkStats()).toMatchObject({ written: 1, queued: 30, dropped: 0 });
    await release();
    await Promise.all(writes);
    await log.flush();
    expect(log.sinkStats()).toEqual({ written: 31, queued: 0, dropped: 0, failedBatches: 0, failedRows: 0 });
    expect(await count(log)).toBe(31);
  });

  it('a server that accepts and never answers: writes return at once, the overflow is dropped, hung batches are given up', async () => {
    const database = await blackHole();
    const { logger, lines } = recordingLogger();
    const log = openLog({ url: database.url, batchSize: 5, queueSize: 10, flushMs: 0, writeTimeoutMs: 20, logger });
    for (let n = 0; n < 25; n++) expect(log.write(logRow())).toBeUndefined();
    expect(log.sinkStats()).toMatchObject({ written: 0, queued: 10, dropped: 15 });
    expect(lines.filter((line) => line.message === 'PostgresRequestLog: queue full, rows dropped')).toHaveLength(1);
    // Each attempt times out (the server still holds the connections): the queue moves on.
    await log.flush();
    expect(log.sinkStats()).toEqual({ written: 0, queued: 0, dropped: 15, failedBatches: 2, failedRows: 10 });
    expect(lines.filter((line) => line.level === 'error').map((line) => line.fields?.message)).toEqual(['no answer within 20 ms', 'no answer within 20 ms']);
    database.close();
    await log.close();
  });

  it('a key and time range query reads the key/time index on a few thousand rows', async () => {
    const log = openLog({ batchSize: 500 });
    const schema = schemaOf(log);
    for (let n = 0; n < 4000; n++) log.write(logRow({ keyId: `key-${n % 80}`, model: `m${n % 5}`, startedAt: today() - (n % 3) * DAY_MS + n * 1000 }));
    await log.flush();
    await suite.db.pool.query(`ANALYZE "${schema}".infergate_requests`);
    const { text, values } = logQuerySql(`"${schema}".infergate_requests`, { keyId: 'key-7', from: today() - DAY_MS, to: today() + DAY_MS, limit: 50 });
    const client = await suite.db.pool.connect();
    try {
      const plan = (await client.query(`EXPLAIN ${text}`, values)).rows.map((row) => row['QUERY PLAN'] as string).join('\n');
      expect(plan).toMatch(/Index Scan using \S*key_id_started_at_idx|Bitmap Index Scan on \S*key_id_started_at_idx/);
      expect(plan).not.toMatch(/Seq Scan/);
    } finally {
      client.release();
    }
  });
});
