import type { Stats, StatsPoint, StatsQuery } from './request-log.js';

/**
 * What both logs share in `stats`: the range widened to whole buckets, the series cut to the ten
 * largest by cost plus `(other)`, every series given a point per bucket (zeros included, so the
 * charts' series line up), and percentiles computed as PostgreSQL's `percentile_cont` does.
 */

export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;
/** Most points a series has: 41 days by hour, or years by day. A wider range is refused. */
export const MAX_STATS_BUCKETS = 1000;
/** Series kept apart; the rest are summed under `OTHER_SERIES`. */
export const MAX_SERIES = 10;
export const OTHER_SERIES = '(other)';

/** One bucket's totals for one model or key. */
export interface StatsCell extends StatsPoint {
  name: string;
}

/** The range `[from, to)` widened to whole UTC buckets; throws a `RangeError` over `MAX_STATS_BUCKETS`. */
export function bucketRange(query: StatsQuery): { from: number; to: number; width: number } {
  const width = query.bucket === 'day' ? DAY_MS : HOUR_MS;
  if (!Number.isSafeInteger(query.from) || !Number.isSafeInteger(query.to) || query.to <= query.from) throw new RangeError('stats: `to` must be after `from`');
  const from = query.from - mod(query.from, width);
  const to = query.to - mod(query.to, width) + (mod(query.to, width) === 0 ? 0 : width);
  if ((to - from) / width > MAX_STATS_BUCKETS) throw new RangeError(`stats: a range spans at most ${MAX_STATS_BUCKETS} ${query.bucket}s`);
  return { from, to, width };
}

/** The start of `at`'s bucket. */
export function bucketOf(at: number, width: number): number {
  return at - mod(at, width);
}

/** Series and totals from the cells of a widened range. */
export function buildSeries(cells: readonly StatsCell[], range: { from: number; to: number; width: number }): Pick<Stats, 'series' | 'totals'> {
  const byName = new Map<string, StatsCell[]>();
  const totals = { requests: 0, errors: 0, costUsd: 0, inputTokens: 0, outputTokens: 0 };
  const sizes = new Map<string, { costUsd: number; requests: number }>();
  for (const cell of cells) {
    add(totals, cell);
    const size = sizes.get(cell.name) ?? { costUsd: 0, requests: 0 };
    size.costUsd += cell.costUsd;
    size.requests += cell.requests;
    sizes.set(cell.name, size);
  }
  const ranked = [...sizes].sort(([nameA, a], [nameB, b]) => b.costUsd - a.costUsd || b.requests - a.requests || (nameA < nameB ? -1 : 1));
  const kept = new Set(ranked.slice(0, MAX_SERIES).map(([name]) => name));
  for (const cell of cells) {
    const name = kept.has(cell.name) ? cell.name : OTHER_SERIES;
    const list = byName.get(name) ?? [];
    list.push(cell);
    byName.set(name, list);
  }
  const names = [...kept];
  if (byName.has(OTHER_SERIES)) names.push(OTHER_SERIES);
  const series = names.map((name) => {
    const points = new Map<number, StatsPoint>();
    for (let at = range.from; at < range.to; at += range.width) points.set(at, { at, requests: 0, errors: 0, costUsd: 0, inputTokens: 0, outputTokens: 0 });
    for (const cell of byName.get(name) ?? []) {
      const point = points.get(cell.at);
      if (point) add(point, cell);
    }
    return { name, points: [...points.values()] };
  });
  return { series, totals };
}

/** The `p` (0–1) percentile of sorted values, interpolated as `percentile_cont`; null without values. */
export function percentile(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  const position = p * (sorted.length - 1);
  const low = Math.floor(position);
  const high = Math.ceil(position);
  return sorted[low]! + (sorted[high]! - sorted[low]!) * (position - low);
}

/** p50, p90 and p99 of unsorted values. */
export function percentiles(values: number[]): Stats['latency'] {
  values.sort((a, b) => a - b);
  return { p50: percentile(values, 0.5), p90: percentile(values, 0.9), p99: percentile(values, 0.99) };
}

function add(sum: Omit<StatsPoint, 'at'>, cell: Omit<StatsPoint, 'at'>): void {
  sum.requests += cell.requests;
  sum.errors += cell.errors;
  sum.costUsd += cell.costUsd;
  sum.inputTokens += cell.inputTokens;
  sum.outputTokens += cell.outputTokens;
}

function mod(value: number, width: number): number {
  return ((value % width) + width) % width;
}
