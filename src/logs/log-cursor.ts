import { InvalidCursorError } from '../admin/keys/managed-key-store.js';
import type { RequestLogRow } from './request-log.js';

/**
 * The request log's order and paging, the same for every log: newest first (`startedAt`
 * descending), ties by request id ascending, and a keyset cursor naming the last row of a page, so
 * a page's `next` keeps its place while new rows arrive (they sort before it).
 */

export interface LogPosition {
  startedAt: number;
  requestId: string;
}

/** Thrown by a log's `query` for a cursor it did not make (the admin API answers 400); the key stores' class too. */
export { InvalidCursorError };

export function encodeCursor(row: LogPosition): string {
  return Buffer.from(JSON.stringify([row.startedAt, row.requestId])).toString('base64url');
}

export function decodeCursor(cursor: string): LogPosition {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw new InvalidCursorError();
  }
  if (!Array.isArray(value) || value.length !== 2 || !Number.isSafeInteger(value[0]) || typeof value[1] !== 'string') throw new InvalidCursorError();
  return { startedAt: value[0], requestId: value[1] };
}

/** A page of rows read one past `limit`: the first `limit`, and the cursor after the last when there were more. */
export function pageOf<T>(rows: T[], limit: number, position: (row: T) => LogPosition): { data: T[]; next?: string } {
  const data = rows.slice(0, limit);
  const last = data.at(-1);
  return rows.length > limit && last ? { data, next: encodeCursor(position(last)) } : { data };
}

/** Negative when `a` comes first in the log's order. */
export function compareLogOrder(a: LogPosition, b: LogPosition): number {
  if (a.startedAt !== b.startedAt) return b.startedAt - a.startedAt;
  return a.requestId < b.requestId ? -1 : a.requestId > b.requestId ? 1 : 0;
}

/** Whether a row's status matches the `status` filter: `ok`, `error` or one HTTP status. */
export function statusMatches(row: RequestLogRow, status: 'ok' | 'error' | number | undefined): boolean {
  if (status === undefined) return true;
  return typeof status === 'number' ? row.httpStatus === status : row.status === status;
}
