import type { HealthNotice } from './health-bus.js';

/**
 * Longest a notice holds, in ms: a longer `forMs` (a `retry-after` of a day, or a hostile message
 * on the bus) is cut to it, so no notice can keep a deployment out of every instance for long.
 */
export const HEALTH_NOTICE_MAX_MS = 3_600_000;
/** Longest deployment id a notice may name (a wildcard deployment's id holds a client's model name). */
const DEPLOYMENT_ID_MAX = 512;
/** Longest instance id in `from`. */
const INSTANCE_ID_MAX = 128;

/**
 * `value` as a notice when it is one, else undefined. What comes from another instance is checked,
 * not trusted: only the four fields are kept, `forMs` is a positive whole number of ms at most
 * `HEALTH_NOTICE_MAX_MS`, and a `closed` notice carries none.
 */
export function healthNoticeOf(value: unknown): HealthNotice | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { deployment, state, forMs, from } = value as Record<string, unknown>;
  if (!isId(deployment, DEPLOYMENT_ID_MAX) || !isId(from, INSTANCE_ID_MAX)) return undefined;
  if (state === 'closed') return { deployment, state, from };
  if (state !== 'open' && state !== 'backoff') return undefined;
  if (typeof forMs !== 'number' || !Number.isFinite(forMs) || forMs <= 0) return undefined;
  return { deployment, state, forMs: Math.min(Math.ceil(forMs), HEALTH_NOTICE_MAX_MS), from };
}

function isId(value: unknown, maxLength: number): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= maxLength;
}
