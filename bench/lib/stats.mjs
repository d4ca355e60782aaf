// Small statistics helpers: percentiles of samples, medians and spread across rounds.

/**
 * The p-th percentile (0–100) of ascending samples, nearest rank; NaN for no samples.
 * @param {ArrayLike<number>} ascending
 * @param {number} p
 */
export function percentile(ascending, p) {
  const n = ascending.length;
  if (n === 0) return NaN;
  const rank = Math.min(n - 1, Math.max(0, Math.ceil((p / 100) * n) - 1));
  return /** @type {number} */ (ascending[rank]);
}

/** Sorts a copy of the samples as a Float64Array. @param {ArrayLike<number>} values */
export function ascending(values) {
  return Float64Array.from(values).sort();
}

/** p50, p90, p99, max and count of latency-like samples. @param {ArrayLike<number>} values */
export function summarize(values) {
  const a = ascending(values);
  return {
    count: a.length,
    p50: percentile(a, 50),
    p90: percentile(a, 90),
    p99: percentile(a, 99),
    max: a.length ? /** @type {number} */ (a[a.length - 1]) : NaN,
  };
}

/**
 * Median of a metric across rounds, with its spread: min, max and (max − min) / median.
 * @param {number[]} values
 */
export function acrossRounds(values) {
  const finite = values.filter((v) => Number.isFinite(v));
  if (finite.length === 0) return { median: NaN, min: NaN, max: NaN, spread: NaN, n: 0 };
  const a = ascending(finite);
  const mid = a.length >> 1;
  // Separate casts: Biome's formatter moves a cast that opens a parenthesized sum out of it.
  const upper = /** @type {number} */ (a[mid]);
  const lower = /** @type {number} */ (a[mid - 1]);
  const median = a.length % 2 ? upper : (lower + upper) / 2;
  const min = /** @type {number} */ (a[0]);
  const max = /** @type {number} */ (a[a.length - 1]);
  return { median, min, max, spread: median !== 0 ? (max - min) / Math.abs(median) : NaN, n: a.length };
}

/** Shuffles in place (Fisher–Yates). @template T @param {T[]} items @returns {T[]} */
export function shuffle(items) {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [items[i], items[j]] = [/** @type {T} */ (items[j]), /** @type {T} */ (items[i])];
  }
  return items;
}

/**
 * Least-squares line through points: slope, intercept and r² (NaN for fewer than two points).
 * @param {ArrayLike<number>} xs @param {ArrayLike<number>} ys
 */
export function linearFit(xs, ys) {
  const n = Math.min(xs.length, ys.length);
  if (n < 2) return { slope: NaN, intercept: NaN, r2: NaN, n };
  let sx = 0;
  let sy = 0;
  for (let i = 0; i < n; i++) {
    sx += /** @type {number} */ (xs[i]);
    sy += /** @type {number} */ (ys[i]);
  }
  const mx = sx / n;
  const my = sy / n;
  let sxx = 0;
  let sxy = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    const dx = /** @type {number} */ (xs[i]) - mx;
    const dy = /** @type {number} */ (ys[i]) - my;
    sxx += dx * dx;
    sxy += dx * dy;
    syy += dy * dy;
  }
  const slope = sxx > 0 ? sxy / sxx : NaN;
  return { slope, intercept: my - slope * mx, r2: sxx > 0 && syy > 0 ? (sxy * sxy) / (sxx * syy) : NaN, n };
}
