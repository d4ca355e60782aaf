// What the soak watches inside the gateway process: memory, active resources by type, event-loop
// delay per sampling window, the gateway's own log lines (a counting logger, so errors it logs
// are seen without the cost of writing them) and anything thrown past it, which is recorded
// instead of ending the process so that the soak can report it.
import { createHistogram } from 'node:perf_hooks';

/** The delay timer's period: how late it fires is the event loop's delay. */
const PERIOD_MS = 10;
const KEPT_EXAMPLES = 3;

/**
 * Event-loop delay in two histograms (µs), the current window and the whole run. A timer of its
 * own rather than `monitorEventLoopDelay`, so that a pause the probe causes (a forced GC) can be
 * left out: `skipNext()` drops the next measurement.
 */
function delayMonitor() {
  const window = createHistogram();
  const whole = createHistogram();
  let skip = false;
  let due = performance.now() + PERIOD_MS;
  const tick = () => {
    const now = performance.now();
    const lateUs = Math.max(1, Math.round((now - due) * 1000));
    if (!skip) {
      window.record(lateUs);
      whole.record(lateUs);
    }
    skip = false;
    due = now + PERIOD_MS;
    setTimeout(tick, PERIOD_MS).unref();
  };
  setTimeout(tick, PERIOD_MS).unref();
  return { window, whole, skipNext: () => (skip = true) };
}

/** @param {import('node:perf_hooks').RecordableHistogram} h */
const delayStats = (h) => ({
  p50Ms: h.percentile(50) / 1000,
  p99Ms: h.percentile(99) / 1000,
  p999Ms: h.percentile(99.9) / 1000,
  maxMs: h.max / 1000,
  count: h.count,
});

export function healthProbe() {
  const eld = delayMonitor();
  /** @type {Map<string, { level: string, message: string, count: number, examples: unknown[] }>} */
  const logs = new Map();
  /** @type {{ kind: string, count: number, examples: string[] }[]} */
  const thrown = [];

  /** @param {string} level */
  const note = (level) => (/** @type {string} */ message, /** @type {Record<string, unknown>} */ fields) => {
    const key = `${level} ${message}`;
    let entry = logs.get(key);
    if (!entry) logs.set(key, (entry = { level, message, count: 0, examples: [] }));
    entry.count++;
    if (entry.examples.length < KEPT_EXAMPLES && fields)
      entry.examples.push(JSON.parse(JSON.stringify(fields, (_, v) => (v instanceof Error ? String(v.stack ?? v) : v))));
  };
  /** @param {string} kind */
  const record = (kind) => (/** @type {unknown} */ error) => {
    let entry = thrown.find((e) => e.kind === kind);
    if (!entry) thrown.push((entry = { kind, count: 0, examples: [] }));
    entry.count++;
    if (entry.examples.length < KEPT_EXAMPLES) entry.examples.push(String(/** @type {Error} */ (error)?.stack ?? error));
  };
  process.on('uncaughtException', record('uncaughtException'));
  process.on('unhandledRejection', record('unhandledRejection'));

  return {
    logger: { info: note('info'), warn: note('warn'), error: note('error') },

    /**
     * Memory and resources now, and the event-loop delay since the last sample. With `gc` (and
     * node run with --expose-gc) it also collects garbage and reads the live heap; the pause is
     * left out of the delay histograms.
     * @param {{ gc?: boolean }} [options]
     */
    sample({ gc = false } = {}) {
      const window = delayStats(eld.window);
      const memory = process.memoryUsage();
      /** @type {Record<string, number>} */
      const resources = {};
      for (const type of process.getActiveResourcesInfo()) resources[type] = (resources[type] ?? 0) + 1;
      let liveHeap;
      if (gc && typeof globalThis.gc === 'function') {
        globalThis.gc();
        liveHeap = process.memoryUsage().heapUsed;
        eld.skipNext();
      }
      eld.window.reset();
      return { at: Date.now(), memory, liveHeap, resources, eld: window };
    },

    /** Event-loop delay over every sampled window, and what was logged or thrown. */
    summary() {
      return {
        eld: delayStats(eld.whole),
        logs: [...logs.values()],
        thrown,
      };
    },
  };
}
