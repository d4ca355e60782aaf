// Whether memory plateaus: a least-squares line through the samples after the warm-up, its slope
// in MB per minute, and the growth it implies over that span relative to where it starts.
import { linearFit } from './stats.mjs';

/** Plateau: slope under 0.1 MB/min and under 5% growth after the warm-up. */
export const PLATEAU = { slopeMBPerMin: 0.1, growth: 0.05 };

const MB = 2 ** 20;

/**
 * @param {{ t: number, v: number | undefined }[]} points  t in seconds, v in bytes
 * @param {number} fromS  end of the warm-up
 */
export function trend(points, fromS) {
  const after = points.filter((p) => p.t >= fromS && Number.isFinite(p.v));
  const fit = linearFit(
    after.map((p) => p.t / 60),
    after.map((p) => /** @type {number} */ (p.v) / MB),
  );
  const first = after[0]?.t ?? NaN;
  const last = after[after.length - 1]?.t ?? NaN;
  const startMB = fit.intercept + (fit.slope * first) / 60;
  const endMB = fit.intercept + (fit.slope * last) / 60;
  const growth = (endMB - startMB) / startMB;
  const values = after.map((p) => /** @type {number} */ (p.v) / MB);
  return {
    n: after.length,
    slopeMBPerMin: fit.slope,
    r2: fit.r2,
    startMB,
    endMB,
    growth,
    minMB: values.length ? Math.min(...values) : NaN,
    maxMB: values.length ? Math.max(...values) : NaN,
    plateau: fit.n >= 2 && fit.slope < PLATEAU.slopeMBPerMin && growth < PLATEAU.growth,
  };
}

/**
 * The verdict over the samples: RSS, and the live heap (after a forced GC) when it was read,
 * else the heap in use as sampled. With what one video task holds, the same series net of the
 * task store (which keeps every task by design) tell its growth from anything else's.
 * @param {{ t: number, rss: number, heapUsed: number, liveHeap?: number, videoTasks: number }[]} samples
 * @param {number} warmupS @param {number} bytesPerTask
 */
export function memoryVerdict(samples, warmupS, bytesPerTask) {
  const rss = trend(
    samples.map((s) => ({ t: s.t, v: s.rss })),
    warmupS,
  );
  const heapUsed = trend(
    samples.map((s) => ({ t: s.t, v: s.heapUsed })),
    warmupS,
  );
  const live = samples.filter((s) => s.liveHeap !== undefined);
  const liveHeap =
    live.length >= 3
      ? trend(
          live.map((s) => ({ t: s.t, v: s.liveHeap })),
          warmupS,
        )
      : undefined;
  const heap = liveHeap && liveHeap.n >= 2 ? liveHeap : heapUsed;
  const tasks = Number.isFinite(bytesPerTask) && bytesPerTask > 0 ? bytesPerTask : 0;
  const net =
    tasks > 0
      ? {
          rss: trend(
            samples.map((s) => ({ t: s.t, v: s.rss - tasks * s.videoTasks })),
            warmupS,
          ),
          heap: trend(
            (heap === liveHeap ? live : samples).map((s) => ({
              t: s.t,
              v: /** @type {number} */ (heap === liveHeap ? s.liveHeap : s.heapUsed) - tasks * s.videoTasks,
            })),
            warmupS,
          ),
        }
      : undefined;
  return {
    rss,
    heapUsed,
    liveHeap,
    heapBasis: heap === liveHeap ? 'live heap after GC' : 'heap used',
    plateau: rss.plateau && heap.plateau,
    net: net && { ...net, plateau: net.rss.plateau && net.heap.plateau },
  };
}
