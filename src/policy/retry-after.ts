/**
 * The wait an upstream asked for, in ms, from `retry-after-ms`, or `retry-after` in seconds or
 * as an HTTP date. Undefined when absent or unreadable.
 */
export function retryAfterMsOf(headers: Record<string, string>, now = Date.now()): number | undefined {
  const ms = Number(headers['retry-after-ms']);
  if (headers['retry-after-ms'] !== undefined && Number.isFinite(ms) && ms >= 0) return ms;
  const value = headers['retry-after'];
  if (value === undefined) return undefined;
  const seconds = Number(value);
  if (value.trim() !== '' && Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** `retry-after` in whole seconds, rounded up so a client never comes back early. */
export function retryAfterSeconds(ms: number): string {
  return String(Math.max(1, Math.ceil(ms / 1000)));
}
