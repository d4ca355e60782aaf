import { describe, expect, it } from 'vitest';
import { InvalidCursorError } from '../../src/logs/log-cursor.js';
import { MemoryRequestLog } from '../../src/logs/memory-request-log.js';
import { type RequestLogRow, rowOf } from '../../src/logs/request-log.js';
import { DAY_MS, HOUR_MS, MAX_STATS_BUCKETS } from '../../src/logs/stats-series.js';
import { usageEvent } from '../telemetry/events.js';
import { errorRow, logRow, toolCallRow } from './log-rows.js';

/** The start of the current UTC hour, so rows placed relative to it fall in known buckets. */
const thisHour = () => Date.now() - (Date.now() % HOUR_MS);

async function allPages(log: MemoryRequestLog, limit: number, filters: Record<string, unknown> = {}): Promise<RequestLogRow[]> {
  const rows: RequestLogRow[] = [];
  let cursor: string | undefined;
  do {
    const page = await log.query({ ...filters, limit, cursor });
    rows.push(...page.data);
    cursor = page.next;
  } while (cursor);
  return rows;
}

describe('MemoryRequestLog', () => {
  it("keeps each guardrail's outcome of a usage event as name:phase:outcome[:categories], and nothing when none ran", async () => {
    const log = new MemoryRequestLog();
    const guarded = rowOf(
      usageEvent({
        requestId: 'req_guarded',
        guardrails: [
          { guardrail: 'pii', phase: 'input', action: 'mask', outcome: 'masked', categories: ['email', 'phone'], findings: 2, durationMs: 0.1 },
          { guardrail: 'moderation', phase: 'output', action: 'block', outcome: 'passed', categories: [], findings: 0, durationMs: 80 },
        ],
      }),
    );
    const plain = rowOf(usageEvent({ requestId: 'req_plain' }));
    log.write(guarded);
    log.write(plain);
    expect((await log.get('req_guarded'))?.guardrails).toEqual(['pii:input:masked:email,phone', 'moderation:output:passed']);
    expect(await log.get('req_plain')).not.toHaveProperty('guardrails');
  });

  it('keeps the most recent rows up to its size, and forgets the evicted ones by id', async () => {
    const log = new MemoryRequestLog({ size: 3 });
    const rows = [1, 2, 3, 4, 5].map((n) => logRow({ startedAt: 1_000 * n }));
    for (const row of rows) log.write(row);
    expect((await log.query({ limit: 10 })).data.map((row) => row.requestId)).toEqual([rows[4]!.requestId, rows[3]!.requestId, rows[2]!.requestId]);
    expect(await log.get(rows[0]!.requestId)).toBeUndefined();
    expect(await log.get(rows[4]!.requestId)).toEqual(rows[4]);
    expect(log.sinkStats()).toEqual({ written: 5, queued: 0, dropped: 0, failedBatches: 0, failedRows: 0 });
  });

  it('holds captured texts up to contentBytes: past it the oldest rows lose their texts, never the rows', async () => {
    // 100 characters of texts a row: 200 bytes counted; a budget of 500 holds two rows' texts.
    const log = new MemoryRequestLog({ contentBytes: 500 });
    const rows = [1, 2, 3].map((n) => logRow({ startedAt: 1_000 * n, content: { request: 'q'.repeat(50), response: 'a'.repeat(50) } }));
    for (const row of rows) log.write(row);
    expect((await log.get(rows[0]!.requestId))?.content).toBeUndefined();
    expect((await log.get(rows[1]!.requestId))?.content).toEqual({ request: 'q'.repeat(50), response: 'a'.repeat(50) });
    expect((await log.get(rows[2]!.requestId))?.content).toEqual({ request: 'q'.repeat(50), response: 'a'.repeat(50) });
    expect((await log.query({ limit: 10 })).data).toHaveLength(3);
    // The caller's row is not touched: the log strips its own copy.
    expect(rows[0]!.content).toBeDefined();
  });

  it('writes a request id once', async () => {
    const log = new MemoryRequestLog();
    const row = logRow();
    log.write(row);
    log.write({ ...row, costUsd: 99 });
    expect((await log.query({ limit: 10 })).data).toEqual([row]);
  });

  it('filters by key, model, status, HTTP status and time range, all together', async () => {
    const log = new MemoryRequestLog();
    const at = thisHour();
    const a = logRow({ keyId: 'k1', model: 'm1', startedAt: at });
    const b = errorRow({ keyId: 'k1', model: 'm1', startedAt: at + 1, httpStatus: 429 });
    const c = errorRow({ keyId: 'k2', model: 'm1', startedAt: at + 2 });
    const d = logRow({ keyId: 'k1', model: 'm2', startedAt: at + 3 });
    for (const row of [a, b, c, d]) log.write(row);
    const ids = async (filters: Record<string, unknown>) => (await log.query({ limit: 10, ...filters })).data.map((row) => row.requestId);
    expect(await ids({ keyId: 'k1' })).toEqual([d, b, a].map((row) => row.requestId));
    expect(await ids({ model: 'm1' })).toEqual([c, b, a].map((row) => row.requestId));
    expect(await ids({ status: 'error' })).toEqual([c, b].map((row) => row.requestId));
    expect(await ids({ status: 'ok', keyId: 'k1' })).toEqual([d, a].map((row) => row.requestId));
    expect(await ids({ status: 429 })).toEqual([b.requestId]);
    expect(await ids({ from: at + 1, to: at + 3 })).toEqual([c, b].map((row) => row.requestId));
  });

  it('pages newest first through rows with equal times, and a cursor keeps its place while rows arrive', async () => {
    const log = new MemoryRequestLog();
    const at = thisHour();
    const rows = Array.from({ length: 7 }, (_, n) => logRow({ startedAt: at + (n < 5 ? 0 : n) }));
    for (const row of rows) log.write(row);
    const first = await log.query({ limit: 3 });
    // A newer row arrives between pages: it is not on the next pages, and nothing repeats or goes missing.
    log.write(logRow({ startedAt: at + 100 }));
    const rest: RequestLogRow[] = [];
    let cursor = first.next;
    while (cursor) {
      const page = await log.query({ limit: 3, cursor });
      rest.push(...page.data);
      cursor = page.next;
    }
    const expected = [...rows].sort((x, y) => y.startedAt - x.startedAt || (x.requestId < y.requestId ? -1 : 1)).map((row) => row.requestId);
    expect([...first.data, ...rest].map((row) => row.requestId)).toEqual(expected);
    expect(await allPages(log, 2)).toHaveLength(8);
  });

  it('keeps the most recent tool calls up to its size, without their arguments', async () => {
    const log = new MemoryRequestLog({ size: 2 });
    const calls = [0, 1, 2].map((n) => toolCallRow({ startedAt: thisHour() + n, arguments: { secret: 'kept-only-in-postgres' } }));
    for (const call of calls) log.writeToolCall(call);
    const { arguments: _arguments, ...second } = calls[1]!;
    const { arguments: _also, ...third } = calls[2]!;
    expect((await log.queryToolCalls({ limit: 10 })).data).toEqual([third, second]);
    expect(calls[2]).toHaveProperty('arguments');
  });

  it('refuses a cursor it did not make', async () => {
    const log = new MemoryRequestLog();
    await expect(log.query({ limit: 10, cursor: 'not-a-cursor' })).rejects.toBeInstanceOf(InvalidCursorError);
    await expect(log.query({ limit: 10, cursor: Buffer.from('[1.5,"x"]').toString('base64url') })).rejects.toBeInstanceOf(InvalidCursorError);
  });

  it('stats: hour buckets by model, zeros between, totals and percentiles', async () => {
    const log = new MemoryRequestLog();
    const hour = thisHour() - 3 * HOUR_MS;
    log.write(logRow({ model: 'm1', startedAt: hour + 5, costUsd: 1, latencyMs: 100, ttftMs: 10 }));
    log.write(errorRow({ model: 'm1', startedAt: hour + 10, latencyMs: 200 }));
    log.write(logRow({ model: 'm2', startedAt: hour + 2 * HOUR_MS, costUsd: 2, inputTokens: 7, outputTokens: 3, latencyMs: 300, ttftMs: 30 }));
    log.write(logRow({ model: 'm2', startedAt: hour - HOUR_MS, costUsd: 50 })); // before the range
    const stats = await log.stats({ from: hour + 1, to: hour + 3 * HOUR_MS, bucket: 'hour', by: 'model' });
    expect(stats.series.map((series) => series.name)).toEqual(['m2', 'm1']);
    const m1 = stats.series[1]!.points;
    expect(m1.map((point) => point.at)).toEqual([hour, hour + HOUR_MS, hour + 2 * HOUR_MS]);
    expect(m1[0]).toEqual({ at: hour, requests: 2, errors: 1, costUsd: 1, inputTokens: 20, outputTokens: 20 });
    expect(m1[1]).toEqual({ at: hour + HOUR_MS, requests: 0, errors: 0, costUsd: 0, inputTokens: 0, outputTokens: 0 });
    expect(stats.totals).toEqual({ requests: 3, errors: 1, costUsd: 3, inputTokens: 27, outputTokens: 23 });
    expect(stats.latency).toEqual({ p50: 200, p90: 280, p99: 298 });
    expect(stats.ttft).toEqual({ p50: 20, p90: 28, p99: 29.8 });
  });

  it('stats: day buckets by key, ten series and (other), filters', async () => {
    const log = new MemoryRequestLog();
    const today = Date.now() - (Date.now() % DAY_MS);
    for (let n = 0; n < 12; n++) log.write(logRow({ keyId: `key-${n}`, startedAt: today - DAY_MS + n, costUsd: n + 1 }));
    log.write(logRow({ keyId: 'key-0', model: 'other-model', startedAt: today, costUsd: 100 }));
    const stats = await log.stats({ from: today - DAY_MS, to: today + 1, bucket: 'day', by: 'key', model: 'gpt-test' });
    expect(stats.series.map((series) => series.name)).toEqual([
      'key-11',
      'key-10',
      'key-9',
      'key-8',
      'key-7',
      'key-6',
      'key-5',
      'key-4',
      'key-3',
      'key-2',
      '(other)',
    ]);
    expect(stats.series.at(-1)!.points).toEqual([
      { at: today - DAY_MS, requests: 2, errors: 0, costUsd: 3, inputTokens: 20, outputTokens: 40 },
      { at: today, requests: 0, errors: 0, costUsd: 0, inputTokens: 0, outputTokens: 0 },
    ]);
    expect(stats.totals.requests).toBe(12);
    const empty = await log.stats({ from: today - DAY_MS, to: today, bucket: 'day', by: 'key', keyId: 'nobody' });
    expect(empty).toEqual({
      series: [],
      totals: { requests: 0, errors: 0, costUsd: 0, inputTokens: 0, outputTokens: 0 },
      latency: { p50: null, p90: null, p99: null },
      ttft: { p50: null, p90: null, p99: null },
    });
  });

  it('refuses a stats range of more buckets than MAX_STATS_BUCKETS', async () => {
    const log = new MemoryRequestLog();
    const to = thisHour();
    await expect(log.stats({ from: to - (MAX_STATS_BUCKETS + 1) * HOUR_MS, to, bucket: 'hour', by: 'model' })).rejects.toBeInstanceOf(RangeError);
    await expect(log.stats({ from: to - MAX_STATS_BUCKETS * HOUR_MS, to, bucket: 'hour', by: 'model' })).resolves.toBeDefined();
  });
});
