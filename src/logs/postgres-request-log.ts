import type pg from 'pg';
import { jsonLogger, type Logger } from '../logger.js';
import { PostgresConnection, type PostgresConnectionOptions } from '../postgres/connection.js';
import { sortRows, USAGE_RETENTION_DAYS, utcDay, type UsageStore } from '../state/usage-store.js';
import { BatchQueue, type OverflowPolicy } from './batch-queue.js';
import { decodeCursor, pageOf } from './log-cursor.js';
import { insertToolCalls, TOOL_CALLS, toolCallOfRecord, toolCallQuerySql, toolCallSchema } from './postgres-tool-calls.js';
import { contentText, finite, text, whole } from './postgres-values.js';
import type { LogPage, LogQuery, RequestLog, RequestLogRow, SinkStats, Stats, StatsQuery } from './request-log.js';
import { bucketOf, buildSeries, bucketRange, DAY_MS, type StatsCell } from './stats-series.js';
import type { ToolCallPage, ToolCallQuery, ToolCallRow } from './tool-call-log.js';

export interface PostgresRequestLogOptions extends PostgresConnectionOptions {
  /** Rows per insert statement. Default 500. */
  batchSize?: number | undefined;
  /** Longest a row waits for its batch to fill. Default 1000 ms. */
  flushMs?: number | undefined;
  /** Most rows held in memory waiting for the database. Default 50,000. */
  queueSize?: number | undefined;
  /**
   * Most tool calls held in memory waiting for the database, in a queue of their own, so a burst of
   * MCP tool calls never crowds request rows out of theirs. Default 10,000.
   */
  toolCallQueueSize?: number | undefined;
  /** What a full queue does (docs/admin.md, "Request log"). Default `drop`. */
  overflow?: OverflowPolicy | undefined;
  /** Days of rows and tool calls kept (whole UTC days, today included); the daily rollups are kept 400 days. Default 30. */
  retentionDays?: number | undefined;
  /** Wait before a failed batch's first retry (doubled for each next one). Default 250 ms. */
  retryDelayMs?: number | undefined;
  /** A batch the database has not written after this long is retried (its rows are written at most once). Default 30 s. */
  writeTimeoutMs?: number | undefined;
  /** Where dropped rows and failed batches are told. Default: JSON lines on stderr. */
  logger?: Logger | undefined;
}

/** A column of `infergate_requests`: its SQL type, and the row's value for it. */
type Column = readonly [name: string, type: string, value: (row: RequestLogRow) => unknown];

const COLUMNS: readonly Column[] = [
  ['request_id', 'text', (row) => text(row.requestId)],
  ['started_at', 'timestamptz', (row) => new Date(row.startedAt).toISOString()],
  ['key_id', 'text', (row) => text(row.keyId)],
  ['key_group', 'text', (row) => text(row.keyGroup)],
  ['endpoint', 'text', (row) => text(row.endpoint)],
  ['kind', 'text', (row) => text(row.kind)],
  ['stream', 'boolean', (row) => row.stream],
  ['model', 'text', (row) => text(row.model)],
  ['deployment', 'text', (row) => text(row.deployment)],
  ['provider', 'text', (row) => text(row.provider)],
  ['upstream_model', 'text', (row) => text(row.upstreamModel)],
  ['route_reason', 'text', (row) => text(row.routeReason)],
  ['status', 'text', (row) => text(row.status)],
  ['http_status', 'smallint', (row) => whole(row.httpStatus)],
  ['error_code', 'text', (row) => text(row.errorCode)],
  // rowOf already cut it to 500 characters.
  ['error_message', 'text', (row) => (row.errorMessage === null ? null : row.errorMessage.replaceAll('\u0000', ''))],
  ['cancelled', 'boolean', (row) => row.cancelled],
  ['cached', 'boolean', (row) => row.cached],
  ['finish_reason', 'text', (row) => text(row.finishReason)],
  ['response_id', 'text', (row) => text(row.responseId)],
  ['input_tokens', 'bigint', (row) => whole(row.inputTokens)],
  ['output_tokens', 'bigint', (row) => whole(row.outputTokens)],
  ['cached_input_tokens', 'bigint', (row) => whole(row.cachedInputTokens)],
  ['cache_write_tokens', 'bigint', (row) => whole(row.cacheWriteTokens)],
  ['reasoning_tokens', 'bigint', (row) => whole(row.reasoningTokens)],
  ['cost_usd', 'numeric', (row) => String(finite(row.costUsd))],
  ['latency_ms', 'integer', (row) => whole(row.latencyMs)],
  ['ttft_ms', 'integer', (row) => (row.ttftMs === null ? null : whole(row.ttftMs))],
  ['overhead_ms', 'double precision', (row) => (row.overheadMs === null ? null : finite(row.overheadMs))],
  ['attempts', 'smallint', (row) => whole(row.attempts)],
  // A JSON array of short strings, null when no guardrail ran.
  ['guardrails', 'jsonb', (row) => (row.guardrails ? JSON.stringify(row.guardrails.map((summary) => text(summary))) : null)],
  // Only with `captureContent` on (already scrubbed and capped); read back by `get` alone.
  ['request_content', 'text', (row) => contentText(row.content?.request)],
  ['response_content', 'text', (row) => contentText(row.content?.response)],
];

const CONTENT_COLUMNS = new Set(['request_content', 'response_content']);

const NULLABLE = new Set([
  'route_reason',
  'error_code',
  'error_message',
  'finish_reason',
  'response_id',
  'ttft_ms',
  'overhead_ms',
  'guardrails',
  ...CONTENT_COLUMNS,
]);

/** The columns read back, as a row's fields (numbers as numbers, the time as ms); a list leaves the texts out. */
const SELECT_ROW = COLUMNS.filter(([name]) => !CONTENT_COLUMNS.has(name))
  .map(([name, type]) =>
    name === 'started_at'
      ? '(extract(epoch from started_at) * 1000)::float8 AS started_at'
      : type === 'bigint' || type === 'numeric'
        ? `${name}::float8 AS ${name}`
        : name,
  )
  .join(', ');
const SELECT_ROW_WITH_CONTENT = `${SELECT_ROW}, request_content, response_content`;

const REQUESTS = 'infergate_requests';
/** Most rows the latency percentiles of `stats` are computed over (the range's most recent ones). */
const PERCENTILE_ROWS = 100_000;
const DAILY = 'infergate_usage_daily';
/** How often an instance drops what is past retention (and at its first write). */
const RETENTION_EVERY_MS = 3_600_000;

/**
 * The request log on PostgreSQL (docs/admin.md, "Request log"): every row, in
 * `infergate_requests` partitioned by UTC day, and per day, key, group and model totals in
 * `infergate_usage_daily`, both written by one statement per batch off the request's path (a
 * `BatchQueue`). The request id is the idempotency key: a batch sent twice (a retry after a lost
 * answer, a row resent) adds nothing, to the rows or to the rollups. Shared by every instance.
 */
export class PostgresRequestLog implements RequestLog {
  readonly kind = 'postgres';
  private readonly connection: PostgresConnection;
  private readonly queue: BatchQueue<RequestLogRow>;
  private readonly toolCallQueue: BatchQueue<ToolCallRow>;
  private readonly retentionDays: number;
  private readonly logger: Logger;
  private migrated: Promise<void> | undefined;
  /** Day partitions this instance made or saw (start of the day, ms). */
  private readonly partitions = new Set<number>();
  private lastRetention = Number.NEGATIVE_INFINITY;
  private closing: Promise<void> | undefined;

  constructor(options: PostgresRequestLogOptions) {
    this.connection = new PostgresConnection(options, 'PostgresRequestLog');
    this.retentionDays = options.retentionDays ?? 30;
    if (!Number.isInteger(this.retentionDays) || this.retentionDays < 1) throw new TypeError('PostgresRequestLog: retentionDays must be a positive integer');
    this.logger = options.logger ?? jsonLogger;
    const batching = {
      batchSize: options.batchSize ?? 500,
      flushMs: options.flushMs ?? 1000,
      overflow: options.overflow,
      retryDelayMs: options.retryDelayMs,
      timeoutMs: options.writeTimeoutMs,
      logger: this.logger,
    };
    this.queue = new BatchQueue({ ...batching, name: 'PostgresRequestLog', write: (rows) => this.insert(rows), capacity: options.queueSize ?? 50_000 });
    const toolCallCapacity = options.toolCallQueueSize ?? 10_000;
    this.toolCallQueue = new BatchQueue({
      ...batching,
      // A small tool-call queue takes smaller batches rather than refusing the request log's batch size.
      batchSize: Math.min(batching.batchSize, toolCallCapacity),
      name: 'PostgresRequestLog (tool calls)',
      write: (rows) => this.insertToolCalls(rows),
      capacity: toolCallCapacity,
    });
  }

  write(row: RequestLogRow): void | Promise<void> {
    return this.queue.push(row);
  }

  /** Queues a tool call's row, in a queue of its own (`toolCallQueueSize`) with the same batching and overflow. */
  writeToolCall(row: ToolCallRow): void | Promise<void> {
    return this.toolCallQueue.push(row);
  }

  async flush(): Promise<void> {
    await Promise.all([this.queue.flush(), this.toolCallQueue.flush()]);
  }

  /** Writes what is queued, then closes the pool it opened; once, however often it is called. */
  close(): Promise<void> {
    this.closing ??= Promise.all([this.queue.close(), this.toolCallQueue.close()]).then(() => this.connection.close());
    return this.closing;
  }

  /** Both queues' counts together: rows are rows, whether of requests or tool calls. */
  sinkStats(): SinkStats {
    const requests = this.queue.stats();
    const toolCalls = this.toolCallQueue.stats();
    return {
      written: requests.written + toolCalls.written,
      queued: requests.queued + toolCalls.queued,
      dropped: requests.dropped + toolCalls.dropped,
      failedBatches: requests.failedBatches + toolCalls.failedBatches,
      failedRows: requests.failedRows + toolCalls.failedRows,
    };
  }

  /** `GET /v1/usage` from the daily rollups: give it as `usageStore`. `add` does nothing (this log's writes feed the rollups). */
  usageStore(): UsageStore {
    return {
      add: async () => {},
      list: async (keyId, start, end) => {
        await this.ready();
        const result = await this.connection.pool.query(
          `SELECT to_char(day, 'YYYY-MM-DD') AS date, model, sum(requests)::float8 AS requests, sum(input_tokens)::float8 AS input_tokens,
             sum(output_tokens)::float8 AS output_tokens, sum(cost_usd)::float8 AS cost_usd
           FROM ${this.connection.table(DAILY)} WHERE key_id = $1 AND day BETWEEN $2::date AND $3::date GROUP BY day, model`,
          [keyId, start, end],
        );
        return sortRows(
          result.rows.map((row) => ({
            date: row.date,
            model: row.model,
            requests: row.requests,
            inputTokens: row.input_tokens,
            outputTokens: row.output_tokens,
            costUsd: row.cost_usd,
          })),
        );
      },
    };
  }

  async query(query: LogQuery): Promise<LogPage> {
    const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
    await this.ready();
    const { text, values } = logQuerySql(this.connection.table(REQUESTS), { ...query, after });
    return pageOf((await this.connection.pool.query(text, values)).rows.map(rowOfRecord), query.limit, (row) => row);
  }

  async queryToolCalls(query: ToolCallQuery): Promise<ToolCallPage> {
    const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
    await this.ready();
    const { text, values } = toolCallQuerySql(this.connection.table(TOOL_CALLS), { ...query, after });
    const rows = (await this.connection.pool.query(text, values)).rows.map(toolCallOfRecord);
    return pageOf(rows, query.limit, (row) => ({ startedAt: row.startedAt, requestId: row.id }));
  }

  async get(requestId: string): Promise<RequestLogRow | undefined> {
    await this.ready();
    const result = await this.connection.pool.query(`SELECT ${SELECT_ROW_WITH_CONTENT} FROM ${this.connection.table(REQUESTS)} WHERE request_id = $1 LIMIT 1`, [
      requestId,
    ]);
    return result.rows[0] === undefined ? undefined : rowOfRecord(result.rows[0]);
  }

  /** Hour buckets from the rows, day buckets from the rollups; percentiles from the rows of the range. */
  async stats(query: StatsQuery): Promise<Stats> {
    const range = bucketRange(query);
    await this.ready();
    const name = query.by === 'key' ? 'key_id' : 'model';
    const requests = this.connection.table(REQUESTS);
    /** The conditions on a table's rows of the range, with their values. */
    const where = (time: 'rows' | 'days') => {
      const values: unknown[] = [];
      const conditions =
        time === 'rows'
          ? [`started_at >= $${values.push(new Date(range.from))}`, `started_at < $${values.push(new Date(range.to))}`]
          : [`day >= $${values.push(utcDay(range.from))}::date`, `day < $${values.push(utcDay(range.to))}::date`];
      if (query.keyId !== undefined) conditions.push(`key_id = $${values.push(query.keyId)}`);
      if (query.model !== undefined) conditions.push(`model = $${values.push(query.model)}`);
      return { sql: conditions.join(' AND '), values };
    };
    const rows = where('rows');
    const cellsQuery =
      query.bucket === 'hour'
        ? {
            text: `SELECT (floor(extract(epoch from started_at) / 3600) * 3600000)::float8 AS at, ${name} AS name, count(*)::float8 AS requests,
                count(*) FILTER (WHERE status = 'error')::float8 AS errors, sum(cost_usd)::float8 AS cost_usd,
                sum(input_tokens)::float8 AS input_tokens, sum(output_tokens)::float8 AS output_tokens
              FROM ${requests} WHERE ${rows.sql} GROUP BY 1, 2`,
            values: rows.values,
          }
        : {
            text: `SELECT (extract(epoch from day::timestamp) * 1000)::float8 AS at, ${name} AS name, sum(requests)::float8 AS requests,
                sum(errors)::float8 AS errors, sum(cost_usd)::float8 AS cost_usd, sum(input_tokens)::float8 AS input_tokens,
                sum(output_tokens)::float8 AS output_tokens
              FROM ${this.connection.table(DAILY)} WHERE ${where('days').sql} GROUP BY 1, 2`,
            values: where('days').values,
          };
    const [cells, spread] = await Promise.all([
      this.connection.pool.query(cellsQuery.text, cellsQuery.values),
      this.connection.pool.query(
        // Over the range's most recent rows only: a sort of every row of a month would take the
        // database seconds on a busy gateway, for a number the last 100,000 requests tell as well.
        `SELECT percentile_cont(ARRAY[0.5, 0.9, 0.99]) WITHIN GROUP (ORDER BY latency_ms) AS latency,
           percentile_cont(ARRAY[0.5, 0.9, 0.99]) WITHIN GROUP (ORDER BY ttft_ms) AS ttft
         FROM (SELECT latency_ms, ttft_ms FROM ${requests} WHERE ${rows.sql} ORDER BY started_at DESC LIMIT ${PERCENTILE_ROWS}) AS recent`,
        rows.values,
      ),
    ]);
    const statsCells: StatsCell[] = cells.rows.map((row) => ({
      at: row.at,
      name: row.name,
      requests: row.requests,
      errors: row.errors,
      costUsd: row.cost_usd,
      inputTokens: row.input_tokens,
      outputTokens: row.output_tokens,
    }));
    const { latency, ttft } = spread.rows[0] as { latency: number[] | null; ttft: number[] | null };
    return { ...buildSeries(statsCells, range), latency: threePercentiles(latency), ttft: threePercentiles(ttft) };
  }

  /** Makes the tables once (again after a failure). */
  private ready(): Promise<void> {
    this.migrated ??= this.connection.migrate(this.schemaStatements()).catch((error: unknown) => {
      this.migrated = undefined;
      throw error;
    });
    return this.migrated;
  }

  private schemaStatements(): string[] {
    const requests = this.connection.table(REQUESTS);
    const daily = this.connection.table(DAILY);
    const columns = COLUMNS.map(([name, type]) => `${name} ${type}${NULLABLE.has(name) ? '' : ' NOT NULL'}`).join(', ');
    return [
      `CREATE TABLE IF NOT EXISTS ${requests} (${columns}, PRIMARY KEY (request_id, started_at)) PARTITION BY RANGE (started_at)`,
      // A table made before guardrails existed has no such column.
      `ALTER TABLE ${requests} ADD COLUMN IF NOT EXISTS guardrails jsonb`,
      `CREATE TABLE IF NOT EXISTS ${this.connection.table(`${REQUESTS}_default`)} PARTITION OF ${requests} DEFAULT`,
      `CREATE INDEX IF NOT EXISTS ${REQUESTS}_key_time ON ${requests} (key_id, started_at DESC)`,
      `CREATE INDEX IF NOT EXISTS ${REQUESTS}_model_time ON ${requests} (model, started_at DESC)`,
      `CREATE INDEX IF NOT EXISTS ${REQUESTS}_time ON ${requests} (started_at DESC, request_id)`,
      `CREATE TABLE IF NOT EXISTS ${daily} (day date NOT NULL, key_id text NOT NULL, key_group text NOT NULL, model text NOT NULL,
         requests bigint NOT NULL, errors bigint NOT NULL, input_tokens bigint NOT NULL, output_tokens bigint NOT NULL,
         cached_input_tokens bigint NOT NULL, cost_usd numeric NOT NULL, latency_ms_sum bigint NOT NULL,
         PRIMARY KEY (day, key_id, key_group, model))`,
      `CREATE INDEX IF NOT EXISTS ${DAILY}_key_day ON ${daily} (key_id, day)`,
      // A database made before tool calls were kept gains their table.
      ...toolCallSchema((name) => this.connection.table(name)),
    ];
  }

  /** One batch of tool calls (retention runs here too, so a log of tool calls alone is kept within it). */
  private async insertToolCalls(batch: ToolCallRow[]): Promise<void> {
    await this.ready();
    await this.preparePartitions([]);
    await insertToolCalls(this.connection.pool, this.connection.table(TOOL_CALLS), batch);
  }

  /**
   * One batch: its rows and the rollups of the rows actually inserted, in one statement (so one
   * transaction). Rows are sent in request-id order and rollups upserted in (day, key, group,
   * model) order, so instances writing the same rollup rows take their locks in the same order
   * and never deadlock.
   */
  private async insert(batch: RequestLogRow[]): Promise<void> {
    await this.ready();
    await this.preparePartitions(batch);
    const rows = [...new Map(batch.map((row) => [`${row.requestId}\u0000${row.startedAt}`, row])).values()].sort((a, b) =>
      a.requestId < b.requestId ? -1 : a.requestId > b.requestId ? 1 : a.startedAt - b.startedAt,
    );
    const names = COLUMNS.map(([name]) => name).join(', ');
    const arrays = COLUMNS.map(([, type], index) => `$${index + 1}::${type}[]`).join(', ');
    await this.connection.pool.query(
      `WITH inserted AS (
         INSERT INTO ${this.connection.table(REQUESTS)} (${names})
         SELECT * FROM unnest(${arrays})
         ON CONFLICT DO NOTHING
         RETURNING started_at, key_id, key_group, model, status, input_tokens, output_tokens, cached_input_tokens, cost_usd, latency_ms
       )
       INSERT INTO ${this.connection.table(DAILY)} AS daily
         (day, key_id, key_group, model, requests, errors, input_tokens, output_tokens, cached_input_tokens, cost_usd, latency_ms_sum)
       SELECT (started_at AT TIME ZONE 'UTC')::date, key_id, key_group, model, count(*), count(*) FILTER (WHERE status = 'error'),
         sum(input_tokens), sum(output_tokens), sum(cached_input_tokens), sum(cost_usd), sum(latency_ms)
       FROM inserted GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
       ON CONFLICT (day, key_id, key_group, model) DO UPDATE SET
         requests = daily.requests + excluded.requests, errors = daily.errors + excluded.errors,
         input_tokens = daily.input_tokens + excluded.input_tokens, output_tokens = daily.output_tokens + excluded.output_tokens,
         cached_input_tokens = daily.cached_input_tokens + excluded.cached_input_tokens,
         cost_usd = daily.cost_usd + excluded.cost_usd, latency_ms_sum = daily.latency_ms_sum + excluded.latency_ms_sum`,
      COLUMNS.map(([, , value]) => rows.map(value)),
    );
  }

  /**
   * Makes the day partitions the batch's rows need (by Node's clock, never the database's), and
   * about hourly drops what is past retention: under one advisory lock, so instances take turns.
   */
  private async preparePartitions(batch: RequestLogRow[]): Promise<void> {
    const now = Date.now();
    // A row already past retention gets no partition: it waits in DEFAULT for the next clean-up.
    const oldestKept = this.oldestKeptDay(now);
    const missing = [...new Set(batch.map((row) => bucketOf(row.startedAt, DAY_MS)))].filter((day) => day >= oldestKept && !this.partitions.has(day));
    const retentionDue = now - this.lastRetention >= RETENTION_EVERY_MS;
    if (missing.length === 0 && !retentionDue) return;
    await this.connection.transaction(async (client) => {
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`infergate:${this.connection.schema}:${REQUESTS}`]);
      for (const day of missing) await this.createPartition(client, day);
      if (retentionDue) await this.dropExpired(client, now);
    });
    for (const day of missing) this.partitions.add(day);
    if (retentionDue) this.lastRetention = now;
  }

  /** One day's partition; rows of that day already in the DEFAULT partition are moved into it. */
  private async createPartition(client: pg.PoolClient, day: number): Promise<void> {
    const suffix = utcDay(day).replaceAll('-', '');
    const partition = this.connection.table(`${REQUESTS}_${suffix}`);
    const moved = `infergate_moved_${suffix}`;
    const exists = await client.query('SELECT to_regclass($1) IS NOT NULL AS exists', [partition]);
    if (exists.rows[0].exists) return;
    const requests = this.connection.table(REQUESTS);
    const fallback = this.connection.table(`${REQUESTS}_default`);
    const bounds = [new Date(day), new Date(day + DAY_MS)];
    const stray = await client.query(`SELECT 1 FROM ${fallback} WHERE started_at >= $1 AND started_at < $2 LIMIT 1`, bounds);
    if (stray.rowCount) {
      await client.query(`CREATE TEMP TABLE ${moved} (LIKE ${requests}) ON COMMIT DROP`);
      await client.query(
        `WITH moved AS (DELETE FROM ${fallback} WHERE started_at >= $1 AND started_at < $2 RETURNING *) INSERT INTO ${moved} SELECT * FROM moved`,
        bounds,
      );
    }
    await client.query(`CREATE TABLE ${partition} PARTITION OF ${requests} FOR VALUES FROM ('${bounds[0]!.toISOString()}') TO ('${bounds[1]!.toISOString()}')`);
    if (stray.rowCount) await client.query(`INSERT INTO ${requests} SELECT * FROM ${moved}`);
  }

  /** Drops the day partitions before the kept days, the DEFAULT partition's old rows and tool calls, and rollups past 400 days. */
  private async dropExpired(client: pg.PoolClient, now: number): Promise<void> {
    const oldestKept = this.oldestKeptDay(now);
    const partitions = await client.query(
      `SELECT child.relname AS name FROM pg_inherits JOIN pg_class child ON child.oid = pg_inherits.inhrelid
         JOIN pg_class parent ON parent.oid = pg_inherits.inhparent JOIN pg_namespace ON pg_namespace.oid = parent.relnamespace
       WHERE pg_namespace.nspname = $1 AND parent.relname = $2`,
      [this.connection.schema, REQUESTS],
    );
    for (const { name } of partitions.rows as { name: string }[]) {
      const day = /^infergate_requests_(\d{4})(\d{2})(\d{2})$/.exec(name);
      if (!day) continue;
      const start = Date.parse(`${day[1]}-${day[2]}-${day[3]}T00:00:00Z`);
      if (start < oldestKept) {
        await client.query(`DROP TABLE ${this.connection.table(name)}`);
        this.partitions.delete(start);
      }
    }
    await client.query(`DELETE FROM ${this.connection.table(`${REQUESTS}_default`)} WHERE started_at < $1`, [new Date(oldestKept)]);
    await client.query(`DELETE FROM ${this.connection.table(TOOL_CALLS)} WHERE started_at < $1`, [new Date(oldestKept)]);
    await client.query(`DELETE FROM ${this.connection.table(DAILY)} WHERE day < $1::date`, [
      utcDay(bucketOf(now, DAY_MS) - (USAGE_RETENTION_DAYS - 1) * DAY_MS),
    ]);
  }

  /** The start of the oldest UTC day whose rows are kept: `retentionDays` days, today included. */
  private oldestKeptDay(now: number): number {
    return bucketOf(now, DAY_MS) - (this.retentionDays - 1) * DAY_MS;
  }
}

/** The statement of `query`: filters, keyset position, newest first. Exported for the test that EXPLAINs it. */
export function logQuerySql(
  table: string,
  query: LogQuery & { after?: { startedAt: number; requestId: string } | undefined },
): { text: string; values: unknown[] } {
  const values: unknown[] = [];
  const where: string[] = [];
  if (query.keyId !== undefined) where.push(`key_id = $${values.push(query.keyId)}`);
  if (query.model !== undefined) where.push(`model = $${values.push(query.model)}`);
  if (typeof query.status === 'number') where.push(`http_status = $${values.push(query.status)}`);
  else if (query.status !== undefined) where.push(`status = $${values.push(query.status)}`);
  if (query.from !== undefined) where.push(`started_at >= $${values.push(new Date(query.from))}`);
  if (query.to !== undefined) where.push(`started_at < $${values.push(new Date(query.to))}`);
  if (query.after) {
    const at = values.push(new Date(query.after.startedAt));
    // Newest first, ties by request id: the index (started_at DESC, request_id) read forward.
    where.push(`(started_at < $${at} OR (started_at = $${at} AND request_id > $${values.push(query.after.requestId)}))`);
  }
  const text = `SELECT ${SELECT_ROW} FROM ${table}${where.length ? ` WHERE ${where.join(' AND ')}` : ''}
    ORDER BY started_at DESC, request_id LIMIT $${values.push(query.limit + 1)}`;
  return { text, values };
}

function rowOfRecord(record: Record<string, unknown>): RequestLogRow {
  const row: Record<string, unknown> = {};
  for (const [name] of COLUMNS) {
    if (!CONTENT_COLUMNS.has(name) && name !== 'guardrails') row[name.replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase())] = record[name];
  }
  if (Array.isArray(record.guardrails)) row.guardrails = record.guardrails;
  const request = record.request_content;
  const response = record.response_content;
  if (typeof request === 'string' || typeof response === 'string') {
    row.content = { ...(typeof request === 'string' ? { request } : {}), ...(typeof response === 'string' ? { response } : {}) };
  }
  return row as unknown as RequestLogRow;
}

function threePercentiles(values: number[] | null): Stats['latency'] {
  return values ? { p50: values[0]!, p90: values[1]!, p99: values[2]! } : { p50: null, p90: null, p99: null };
}
