/** Row values made acceptable to PostgreSQL, for the request log's tables. */

/** Longest text kept in a column (an index entry must stay under PostgreSQL's 2,704 bytes). */
const MAX_TEXT = 256;

/**
 * Values PostgreSQL takes whatever the row holds: one it refuses would fail its whole batch. Text
 * without NUL (refused in `text`) and cut; integers rounded; a number that is not finite as 0.
 */
export function text(value: string): string;
export function text(value: string | null): string | null;
export function text(value: string | null): string | null {
  if (value === null) return null;
  const clean = value.includes('\u0000') ? value.replaceAll('\u0000', '') : value;
  return clean.length > MAX_TEXT ? clean.slice(0, MAX_TEXT) : clean;
}
/** A captured text as PostgreSQL takes it (no NUL), or null; capped by the capture already. */
export const contentText = (value: string | undefined): string | null => (value === undefined ? null : value.replaceAll('\u0000', ''));
export const whole = (value: number): number => (Number.isFinite(value) ? Math.round(value) : 0);
export const finite = (value: number): number => (Number.isFinite(value) ? value : 0);

/**
 * A value's JSON as `jsonb` takes it: `jsonb` refuses the escapes `\u0000` and a lone surrogate's
 * (`\ud800`), which `JSON.stringify` writes for those characters (a surrogate pair it writes raw),
 * so they become U+FFFD. An escape is one after an even run of backslashes (`\\u0000` is text).
 */
export function jsonbText(value: unknown): string | null {
  const json = JSON.stringify(value);
  return json === undefined ? null : json.replace(/(?<=(?<!\\)(?:\\\\)*)\\u(?:0000|d[89a-f][0-9a-f]{2})/g, '\\ufffd');
}
