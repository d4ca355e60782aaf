import type pg from 'pg';
import type { LogPosition } from './log-cursor.js';
import { jsonbText, text, whole } from './postgres-values.js';
import type { ToolCallQuery, ToolCallRow } from './tool-call-log.js';

/**
 * The tool calls' table of `PostgresRequestLog` (docs/admin.md, "Tool calls"): its statements,
 * apart from the requests' so each file says one table. One row per tool call, not partitioned
 * (far fewer rows than requests): retention deletes by time, through the time index.
 */

export const TOOL_CALLS = 'infergate_tool_calls';

type Column = readonly [name: string, type: string, value: (row: ToolCallRow) => unknown];

const COLUMNS: readonly Column[] = [
  ['id', 'text', (row) => text(row.id)],
  ['started_at', 'timestamptz', (row) => new Date(row.startedAt).toISOString()],
  ['request_id', 'text', (row) => text(row.requestId)],
  ['key_id', 'text', (row) => text(row.keyId)],
  ['key_group', 'text', (row) => text(row.keyGroup)],
  ['session_id', 'text', (row) => text(row.sessionId)],
  ['protocol_version', 'text', (row) => text(row.protocolVersion)],
  ['server', 'text', (row) => text(row.server)],
  ['tool', 'text', (row) => text(row.tool)],
  ['outcome', 'text', (row) => text(row.outcome)],
  ['duration_ms', 'integer', (row) => whole(row.durationMs)],
  ['request_bytes', 'bigint', (row) => whole(row.requestBytes)],
  ['response_bytes', 'bigint', (row) => whole(row.responseBytes)],
  // toolCallRowOf already cut it to 500 characters.
  ['error', 'text', (row) => (row.error === null ? null : row.error.replaceAll('\u0000', ''))],
  // Only with `mcp.captureArguments`: null when the row has none.
  ['arguments', 'jsonb', (row) => ('arguments' in row ? jsonbText(row.arguments) : null)],
];

const NULLABLE = new Set(['error', 'arguments']);

const SELECT_ROW = COLUMNS.map(([name, type]) =>
  name === 'started_at' ? '(extract(epoch from started_at) * 1000)::float8 AS started_at' : type === 'bigint' ? `${name}::float8 AS ${name}` : name,
).join(', ');

/** The statements that make the table (each run again at every start: `IF NOT EXISTS`). */
export function toolCallSchema(table: (name: string) => string): string[] {
  const calls = table(TOOL_CALLS);
  const columns = COLUMNS.map(([name, type]) => `${name} ${type}${NULLABLE.has(name) ? '' : ' NOT NULL'}`).join(', ');
  return [
    `CREATE TABLE IF NOT EXISTS ${calls} (${columns}, PRIMARY KEY (id))`,
    `CREATE INDEX IF NOT EXISTS ${TOOL_CALLS}_time ON ${calls} (started_at DESC, id)`,
    `CREATE INDEX IF NOT EXISTS ${TOOL_CALLS}_key_time ON ${calls} (key_id, started_at DESC)`,
    `CREATE INDEX IF NOT EXISTS ${TOOL_CALLS}_server_tool_time ON ${calls} (server, tool, started_at DESC)`,
  ];
}

/** One statement per batch (an array per column); the id is the idempotency key, so a retried batch adds nothing. */
export async function insertToolCalls(pool: pg.Pool, table: string, rows: ToolCallRow[]): Promise<void> {
  const names = COLUMNS.map(([name]) => name).join(', ');
  const arrays = COLUMNS.map(([, type], index) => `$${index + 1}::${type}[]`).join(', ');
  await pool.query(
    `INSERT INTO ${table} (${names}) SELECT * FROM unnest(${arrays}) ON CONFLICT DO NOTHING`,
    COLUMNS.map(([, , value]) => rows.map(value)),
  );
}

/** The statement of `queryToolCalls`: filters, keyset position (the cursor's `requestId` is the row's id), newest first. */
export function toolCallQuerySql(table: string, query: ToolCallQuery & { after?: LogPosition | undefined }): { text: string; values: unknown[] } {
  const values: unknown[] = [];
  const where: string[] = [];
  for (const [column, value] of [
    ['key_id', query.keyId],
    ['server', query.server],
    ['tool', query.tool],
    ['outcome', query.outcome],
  ] as const) {
    if (value !== undefined) where.push(`${column} = $${values.push(value)}`);
  }
  if (query.from !== undefined) where.push(`started_at >= $${values.push(new Date(query.from))}`);
  if (query.to !== undefined) where.push(`started_at < $${values.push(new Date(query.to))}`);
  if (query.after) {
    const at = values.push(new Date(query.after.startedAt));
    where.push(`(started_at < $${at} OR (started_at = $${at} AND id > $${values.push(query.after.requestId)}))`);
  }
  const text = `SELECT ${SELECT_ROW} FROM ${table}${where.length ? ` WHERE ${where.join(' AND ')}` : ''}
    ORDER BY started_at DESC, id LIMIT $${values.push(query.limit + 1)}`;
  return { text, values };
}

export function toolCallOfRecord(record: Record<string, unknown>): ToolCallRow {
  const row: Record<string, unknown> = {};
  for (const [name] of COLUMNS) {
    if (name !== 'arguments') row[name.replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase())] = record[name];
  }
  if (record.arguments !== null && record.arguments !== undefined) row.arguments = record.arguments;
  return row as unknown as ToolCallRow;
}
