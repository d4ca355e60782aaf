// The soak's Markdown report: verdict, totals, errors by kind, routes, memory and event-loop delay
// over time (one row per minute on long runs), the plateau fit, and what the gateway logged.
import { PLATEAU } from './soak-trend.mjs';

const MB = 2 ** 20;

/** @param {number | null | undefined} v @param {number} [digits] */
function num(v, digits = 0) {
  if (v === null || v === undefined || !Number.isFinite(v)) return '–';
  return v.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}
const mb = (/** @type {number | undefined} */ bytes, digits = 1) => num(bytes === undefined ? NaN : bytes / MB, digits);
const pct = (/** @type {number} */ n, /** @type {number} */ of) => `${num((100 * n) / Math.max(1, of), 2)}%`;
const clock = (/** @type {number} */ s) => `${Math.floor(s / 60)}:${String(Math.floor(s % 60)).padStart(2, '0')}`;
const cell = (/** @type {string} */ text) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** @param {any} r the soak's result */
export function renderSoakReport(r) {
  const { meta, total, memory } = r;
  const loadS = r.loadMs / 1000;
  const lines = [];
  lines.push(`### Soak run ${meta.date.slice(0, 16).replace('T', ' ')} UTC (${num(meta.options.minutes, 1)} min)`);
  lines.push('');
  lines.push(
    `Machine: ${meta.machine.cpu}, ${meta.machine.cores} cores, ${meta.machine.memoryGB} GB, ${meta.machine.os}; Node ${meta.machine.node}. ` +
      (meta.distGiven
        ? `Build \`${meta.dist}\` (given with --dist; the repository was at \`${meta.commit}\`). `
        : `Commit \`${meta.commit}\`${meta.dirty ? ' (with uncommitted changes in src/)' : ''}, dist/ copied to \`${meta.dist}\` at the start. `) +
      `Processes ${meta.pinned ? 'pinned: gateway on core 1, mock upstream + load on core 0' : 'NOT pinned'}. ` +
      `Load average at start ${meta.loadavgStart.map((/** @type {number} */ l) => l.toFixed(2)).join(' ')}, at end ${meta.loadavgEnd.map((/** @type {number} */ l) => l.toFixed(2)).join(' ')}. ` +
      `Load: ≤ ${meta.options.rate} req/s, ≤ ${meta.options.concurrency} in flight, upstream faults on ${num(meta.options.faultRate * 100)}% of the requests that can have one; ` +
      `samples every ${meta.options.sampleS} s, live heap (forced GC) every ${meta.options.gcEveryS} s.`,
  );
  lines.push('');
  lines.push(`**${r.problems.length ? 'FAILED' : 'Passed'}**${r.problems.length ? `: ${r.problems.join('; ')}` : ': no unexpected error, memory plateaus'}.`);
  lines.push('');
  lines.push('| | |', '|---|---|');
  lines.push(
    `| duration | ${num(loadS / 60, 1)} min of load (warm-up: the first ${num(r.warmupS / 60, 1)} min); the requests in flight at the end took ${num(r.drainMs / 1000, 1)} s more |`,
  );
  lines.push(`| requests | ${num(total.requests)} (${num(total.requests / loadS)} req/s) |`);
  lines.push(`| ok | ${num(total.ok)} (${pct(total.ok, total.requests)}) |`);
  lines.push(`| client aborts (deliberate) | ${num(total.aborted)} (${pct(total.aborted, total.requests)}) |`);
  lines.push(`| expected errors (injected upstream faults) | ${num(total.expected)} (${pct(total.expected, total.requests)}) |`);
  lines.push(`| **unexpected errors** | **${num(total.unexpected)}** |`);
  const eld = r.gateway.eld;
  const first = r.samples[0]?.sched;
  const lastSched = r.samples[r.samples.length - 1]?.sched;
  const runMs = ((r.samples[r.samples.length - 1]?.t ?? 0) - (r.samples[0]?.t ?? 0)) * 1000;
  const starved =
    first && lastSched
      ? ` The gateway's event-loop thread ran ${num((100 * (lastSched.onCpuMs - first.onCpuMs)) / runMs)}% of a core and was starved (runnable, waiting for a core) ${num((100 * (lastSched.waitingMs - first.waitingMs)) / runMs)}% of the time.`
      : '';
  lines.push(
    `| event-loop delay, whole run | p50 ${num(eld.p50Ms, 2)} ms, p99 ${num(eld.p99Ms, 2)} ms, p99.9 ${num(eld.p999Ms, 1)} ms, max ${num(eld.maxMs, 1)} ms.${starved} |`,
  );
  const rss = memory.rss;
  lines.push(
    `| RSS | ${mb(r.samples[0]?.rss)} MB at start, ${num(rss.startMB, 1)} → ${num(rss.endMB, 1)} MB after the warm-up (fit), ${mb(r.samples[r.samples.length - 1]?.rss)} MB at the end, ${mb(r.quiet?.rss)} MB after 3 s quiet |`,
  );
  lines.push(
    `| memory trend after the warm-up | RSS ${num(rss.slopeMBPerMin, 3)} MB/min (${signedPct(rss.growth)}); ${memory.heapBasis} ${num((memory.liveHeap ?? memory.heapUsed).slopeMBPerMin, 3)} MB/min (${signedPct((memory.liveHeap ?? memory.heapUsed).growth)}) → **${memory.plateau ? 'plateau' : 'upward trend'}** |`,
  );
  if (memory.net) {
    lines.push(
      `| … net of the video task store | RSS ${num(memory.net.rss.slopeMBPerMin, 3)} MB/min (${signedPct(memory.net.rss.growth)}); ${memory.heapBasis} ${num(memory.net.heap.slopeMBPerMin, 3)} MB/min (${signedPct(memory.net.heap.growth)}) → **${memory.net.plateau ? 'plateau' : 'upward trend'}** (${num(r.tasks.held)} tasks held at the end, ${num(r.tasks.bytesPerTask)} B each) |`,
    );
  }
  lines.push('');

  lines.push('#### Errors by kind', '');
  if (r.kinds.length === 0) lines.push('None.');
  else {
    lines.push('| kind | outcome | count | first example |', '|---|---|---:|---|');
    const order = { unexpected: 0, expected: 1, aborted: 2 };
    const kinds = [...r.kinds].sort((a, b) => /** @type {any} */ (order)[a.outcome] - /** @type {any} */ (order)[b.outcome] || b.count - a.count);
    for (const k of kinds)
      lines.push(`| ${cell(k.kind)} | ${k.outcome === 'unexpected' ? '**unexpected**' : k.outcome} | ${num(k.count)} | ${cell(k.example.slice(0, 300))} |`);
  }
  lines.push('');

  lines.push('#### Requests by route', '');
  lines.push('| route | requests | ok | aborted | expected errors | unexpected | ok latency p50 / p99 (ms) |', '|---|---:|---:|---:|---:|---:|---:|');
  for (const route of [...r.routes].sort((a, b) => a.route.localeCompare(b.route))) {
    lines.push(
      `| ${route.route} | ${num(route.requests)} | ${num(route.ok)} | ${num(route.aborted)} | ${num(route.expected)} | ${route.unexpected ? `**${num(route.unexpected)}**` : 0} | ${num(route.latency.p50, 1)} / ${num(route.latency.p99, 1)} |`,
    );
  }
  lines.push('');

  lines.push('#### Memory and event loop over time', '');
  lines.push(
    'At the end of each period: memory as sampled; live heap = heap in use right after a forced GC (last read in the period); ' +
      'handles = active resources (`process.getActiveResourcesInfo()`), sockets among them; event-loop delay = worst window of the period; ' +
      "gateway CPU = share of a core its event-loop thread ran, starved = share of the time it was runnable but waited for a core the machine's other work held (`/proc/<pid>/schedstat`).",
  );
  lines.push('');
  lines.push(
    '| time | req/s | RSS MB | heap used MB | live heap MB | external MB | array buffers MB | handles (sockets) | event loop p99 / max ms | gateway CPU / starved | video tasks held |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  );
  for (const row of periods(r.samples, loadS, meta.options.sampleS)) lines.push(row);
  lines.push('');

  lines.push('#### Plateau', '');
  lines.push(
    `Least-squares line through the samples after the warm-up; plateau = slope < ${PLATEAU.slopeMBPerMin} MB/min and growth (the line's end over its start) < ${num(PLATEAU.growth * 100)}%, for RSS and for the ${memory.heapBasis}.`,
  );
  lines.push('');
  lines.push(
    '| series | samples | start (fit) MB | end (fit) MB | min–max MB | slope MB/min | growth | r² | plateau |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---|',
  );
  const series = /** @type {[string, any][]} */ ([
    ['RSS', memory.rss],
    ['live heap after GC', memory.liveHeap],
    ['heap used (as sampled)', memory.heapUsed],
    ['RSS net of video tasks', memory.net?.rss],
    [`${memory.heapBasis} net of video tasks`, memory.net?.heap],
  ]);
  for (const [name, t] of series) {
    if (!t) continue;
    lines.push(
      `| ${name} | ${t.n} | ${num(t.startMB, 1)} | ${num(t.endMB, 1)} | ${num(t.minMB, 1)}–${num(t.maxMB, 1)} | ${num(t.slopeMBPerMin, 3)} | ${signedPct(t.growth)} | ${num(t.r2, 2)} | ${t.plateau ? 'yes' : '**no**'} |`,
    );
  }
  lines.push('');

  const { tasks } = r;
  if (tasks.held > 0) {
    lines.push(
      `Video tasks: the gateway's in-memory task store ${meta.options.taskTtlS > 0 ? `was told to keep a task ${meta.options.taskTtlS} s after its last write (a build whose store takes no options keeps them all)` : 'ran with its default retention'}. After the run it held ${num(tasks.held)}; dropping them freed ${mb(tasks.held * tasks.bytesPerTask, 2)} MB of live heap ` +
        `(${num(tasks.bytesPerTask)} bytes per task). The "net" rows take that out (${num(tasks.bytesPerTask)} B × tasks held at each sample): ${memory.net ? `**${memory.net.plateau ? 'plateau' : 'upward trend'}** without the task store` : '–'}.`,
    );
    lines.push('');
  }

  lines.push('#### What the stores hold at the end', '');
  lines.push(
    'Entries: the sizes of the Maps and Sets among each store’s fields. Live heap: what emptying them freed (a forced GC before and after each, in this order; a few KB either way is noise).',
    '',
    '| store | entries | live heap KB |',
    '|---|---|---:|',
  );
  for (const row of r.stores ?? []) {
    const entries = Object.entries(row.entries).map(([field, size]) => `${field} ${num(size)}`);
    lines.push(`| ${row.name} | ${row.present ? entries.join(', ') || '–' : 'not configured'} | ${row.present ? num(row.bytes / 1024, 1) : ''} |`);
  }
  lines.push('');

  lines.push('#### Gateway logs and crashes', '');
  const logs = r.gateway.logs;
  lines.push('What the gateway logged (its logger counts instead of writing), what reached its stderr anyway, and what was thrown past it.');
  lines.push('');
  if (logs.length === 0 && r.gateway.thrown.length === 0 && r.stderr.length === 0) lines.push('Nothing logged, nothing on stderr, nothing thrown.');
  else {
    lines.push('| level | message | count | first example |', '|---|---|---:|---|');
    for (const entry of logs)
      lines.push(
        `| ${entry.level === 'error' ? '**error**' : entry.level} | ${cell(entry.message)} | ${num(entry.count)} | ${cell(JSON.stringify(entry.examples[0] ?? '').slice(0, 300))} |`,
      );
    for (const entry of r.stderr) lines.push(`| **stderr** | ${cell(entry.line.slice(0, 200))} | ${num(entry.count)} | |`);
    for (const entry of r.gateway.thrown)
      lines.push(`| **${entry.kind}** | thrown past the gateway | ${num(entry.count)} | ${cell(String(entry.examples[0]).slice(0, 300))} |`);
  }
  lines.push('');

  lines.push('#### After the run', '');
  const q = r.quiet;
  lines.push(
    `3 s after the last request: RSS ${mb(q?.rss)} MB, live heap ${mb(q?.liveHeap)} MB, active resources ${resourceList(q?.resources)}. ` +
      `Mock upstream: ${num(r.mock.requests)} requests (${num(r.mock.streams)} streams, ${num(r.mock.json)} JSON, ${num(r.mock.media)} media), ` +
      `faults injected 429: ${num(r.mock.faults[429])}, 500: ${num(r.mock.faults[500])}, cut: ${num(r.mock.faults.cut)}; ` +
      `streams closed before their end ${num(r.mock.aborted)}; streams still open ${num(r.mock.open)}.`,
  );
  lines.push('');
  return lines.join('\n');
}

/** @param {number} g */
function signedPct(g) {
  return Number.isFinite(g) ? `${g >= 0 ? '+' : ''}${num(g * 100, 1)}%` : '–';
}

/** @param {Record<string, number> | undefined} resources */
function resourceList(resources) {
  if (!resources) return '–';
  return Object.entries(resources)
    .sort((a, b) => b[1] - a[1])
    .map(([type, n]) => `${type} ${n}`)
    .join(', ');
}

/**
 * One row per period: a minute on runs of 5 minutes or more, else about a tenth of the run (whole
 * sampling periods, so that each row holds samples). A sample belongs to the period it ends.
 * @param {any[]} samples @param {number} loadS @param {number} sampleS
 */
function periods(samples, loadS, sampleS) {
  const step = loadS >= 300 ? 60 : sampleS * Math.max(1, Math.round(loadS / 10 / sampleS));
  const rows = [];
  let previous = samples[0];
  for (let end = step; end < loadS + step; end += step) {
    const inPeriod = samples.filter((s) => s.t > end - step + sampleS / 2 && s.t <= end + sampleS / 2);
    const last = inPeriod[inPeriod.length - 1];
    if (!last) continue;
    const live = [...inPeriod].reverse().find((s) => s.liveHeap !== undefined)?.liveHeap;
    const rate = previous && last.t > previous.t ? (last.requests - previous.requests) / (last.t - previous.t) : NaN;
    const p99 = Math.max(...inPeriod.map((s) => s.eld.p99Ms));
    const max = Math.max(...inPeriod.map((s) => s.eld.maxMs));
    const handles = Object.values(last.resources).reduce((a, b) => a + b, 0);
    const wallMs = previous && last.t > previous.t ? (last.t - previous.t) * 1000 : NaN;
    const share = (/** @type {'onCpuMs' | 'waitingMs'} */ key) =>
      previous?.sched && last.sched ? `${num((100 * (last.sched[key] - previous.sched[key])) / wallMs)}%` : '–';
    rows.push(
      `| ${clock(last.t)} | ${num(rate)} | ${mb(last.rss)} | ${mb(last.heapUsed)} | ${mb(live)} | ${mb(last.external)} | ${mb(last.arrayBuffers)} | ${handles} (${last.resources.TCPSocketWrap ?? 0}) | ${num(p99, 1)} / ${num(max, 1)} | ${share('onCpuMs')} / ${share('waitingMs')} | ${num(last.videoTasks)} |`,
    );
    previous = last;
  }
  return rows;
}
