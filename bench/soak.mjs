#!/usr/bin/env node
// The soak: `npm run soak -- --minutes 10` (builds first). Mixed traffic for a set time against the
// built gateway in its own process, sampling its memory, resources and event-loop delay, then a
// report (bench/results/soak-latest.md) with a plateau verdict. See "Soak" in docs/benchmark.md.
//
// Processes as in the benchmark: the gateway (bench/gateway-server.mjs --soak) pinned to core 1,
// the mock upstream and this runner (the load) on core 0. The gateway runs a copy of dist/ taken
// at the start, so a rebuild during the run does not change what is running.
// Exit code: 0 when nothing unexpected happened and memory plateaued; 1 otherwise; 2 on a hang.
import { cpSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { createInterface } from 'node:readline';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GATEWAY_CORE, gitInfo, LOAD_CORE, pinned, pinSelf, startChild, stopAll } from './lib/children.mjs';
import { Connection } from './lib/http-client.mjs';
import { rssBytes, schedMillis } from './lib/proc.mjs';
import { soakMix } from './lib/soak-mix.mjs';
import { classify, Tally } from './lib/soak-outcomes.mjs';
import { renderSoakReport } from './lib/soak-report.mjs';
import { memoryVerdict } from './lib/soak-trend.mjs';
import { summarize } from './lib/stats.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '..');

const argv = process.argv.slice(2);
const value = (/** @type {string} */ name, /** @type {string} */ fallback) => {
  const i = argv.indexOf(name);
  return i >= 0 && argv[i + 1] !== undefined ? /** @type {string} */ (argv[i + 1]) : fallback;
};
if (argv.includes('--help') || argv.includes('-h')) {
  console.log(`node bench/soak.mjs [options]   (npm run soak -- [options] builds dist/ first)
  --minutes N        how long the load runs (default 10; 1 for a quick check)
  --rate N           requests started per second, at most (default 150)
  --concurrency N    requests in flight, at most (default 48)
  --fault-rate F     share of requests whose upstream is told to fail (default 0.05)
  --sample S         seconds between samples of the gateway (default 5)
  --warmup F         share of the run left out of the memory trend (default 0.2)
  --dist DIR         run this build instead of a copy of dist/ (it must resolve node_modules)
  --exclude a,b      leave out the routes that start with these (e.g. video, to tell what video tasks hold)
  --task-ttl S       the gateway's task store keeps a video task S seconds after its last write
                     (default 60, so that it reaches a steady state within the run; 0: its default)
  --out DIR          where the report goes (default bench/results)`);
  process.exit(0);
}
const opts = {
  minutes: Number(value('--minutes', '10')),
  rate: Number(value('--rate', '150')),
  concurrency: Number(value('--concurrency', '48')),
  faultRate: Number(value('--fault-rate', '0.05')),
  sampleS: Number(value('--sample', '5')),
  warmup: Number(value('--warmup', '0.2')),
  out: resolve(value('--out', join(here, 'results'))),
  exclude: value('--exclude', '').split(',').filter(Boolean),
  taskTtlS: Number(value('--task-ttl', '60')),
};
for (const [name, v] of Object.entries(opts))
  if (typeof v === 'number' && !(v > 0) && name !== 'faultRate' && name !== 'taskTtlS') throw new Error(`--${name} must be a positive number`);
if (!(opts.faultRate >= 0 && opts.faultRate <= 1)) throw new Error('--fault-rate must be between 0 and 1');
if (!(opts.taskTtlS >= 0)) throw new Error('--task-ttl must be a number of seconds >= 0');
const durationMs = opts.minutes * 60_000;
// A live heap read (forced GC) every ~20th of the run, at least every 5 s and at most every minute.
const gcEveryS = Math.min(60, Math.max(opts.sampleS, Math.round(durationMs / 20_000)));

const watchdog = setTimeout(
  () => {
    console.error(`soak: still running ${opts.minutes + 5} min after the start; stopping`);
    stopAll();
    process.exit(2);
  },
  durationMs + 5 * 60_000,
);
watchdog.unref();
process.on('SIGINT', () => {
  stopAll();
  process.exit(130);
});

const log = (/** @type {string} */ message) => console.error(`[soak ${new Date().toISOString().slice(11, 19)}] ${message}`);
const sleep = (/** @type {number} */ ms) => new Promise((r) => setTimeout(r, ms));
const MB = (/** @type {number} */ bytes) => (bytes / 2 ** 20).toFixed(1);

// The build under test: --dist, or a snapshot of dist/ inside the repository (where node_modules resolves).
let dist = value('--dist', '');
const distGiven = dist !== '';
if (!distGiven) {
  if (!existsSync(join(root, 'dist', 'index.js'))) {
    console.error('soak: dist/ is missing; run `npm run build` (or `npm run soak`, which builds first)');
    process.exit(1);
  }
  dist = join(opts.out, 'soak-dist');
  rmSync(dist, { recursive: true, force: true });
  mkdirSync(opts.out, { recursive: true });
  cpSync(join(root, 'dist'), dist, { recursive: true });
}

const meta = {
  date: new Date().toISOString(),
  machine: {
    cores: os.cpus().length,
    cpu: os.cpus()[0]?.model?.trim() ?? 'unknown',
    memoryGB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    os: `${os.type()} ${os.release()}`,
  },
  ...gitInfo(),
  pinned,
  dist,
  distGiven,
  options: { ...opts, gcEveryS },
  loadavgStart: os.loadavg(),
  /** @type {number[]} */
  loadavgEnd: [],
};

pinSelf();
log(
  `${meta.machine.cpu}, ${meta.machine.cores} cores, Node ${process.version}, commit ${meta.commit}${meta.dirty ? ' (dirty)' : ''}, ${pinned ? 'pinned' : 'NOT pinned'}, load average ${meta.loadavgStart.map((l) => l.toFixed(2)).join(' ')}`,
);
const mock = await startChild('mock', join(here, 'mock-upstream.mjs'), [], LOAD_CORE);
const mockOrigin = `http://127.0.0.1:${mock.port}`;
const ttlArgs = opts.taskTtlS > 0 ? ['--task-ttl-ms', String(opts.taskTtlS * 1000)] : [];
const gateway = await startChild('infergate', join(here, 'gateway-server.mjs'), [mockOrigin, '--soak', ...ttlArgs], GATEWAY_CORE, {
  nodeArgs: ['--expose-gc'],
  env: { ...process.env, INFERGATE_DIST: dist },
  stderr: 'pipe',
});
// The gateway logs through the counting logger: whatever still reaches its stderr (its HTTP
// layer's own messages) is counted, and shown once.
/** @type {Map<string, number>} */
const stderrLines = new Map();
createInterface({ input: /** @type {import('node:stream').Readable} */ (gateway.child.stderr) }).on('line', (line) => {
  const count = stderrLines.get(line);
  if (count === undefined && stderrLines.size >= 50) return;
  if (count === undefined) log(`gateway stderr: ${line}`);
  stderrLines.set(line, (count ?? 0) + 1);
});
await mock.ipc('config', { chunks: 20, intervalMs: 20, ttfbMs: 0, words: 40 });
const mix = soakMix({
  port: gateway.port,
  mockOrigin,
  faultRate: opts.faultRate,
  exclude: opts.exclude,
  taskTtlMs: opts.taskTtlS > 0 ? opts.taskTtlS * 1000 : Infinity,
});

// Every scenario once, without faults: a configuration problem fails here, not after ten minutes.
{
  const conn = new Connection(gateway.port);
  for (const scenario of mix.scenarios) {
    const obs = await scenario.run(conn, undefined);
    const { outcome, kind } = classify(obs);
    if (outcome !== 'ok' && outcome !== 'aborted') {
      console.error(`soak: the check request of ${scenario.route} failed: ${kind}${obs.problem ? ` (${obs.problem})` : ''}`);
      stopAll();
      process.exit(1);
    }
  }
  conn.close();
}

// ---------------------------------------------------------------------------------------------
// Load and sampling

const tally = new Tally();
/** @type {any[]} */
const samples = [];
const started = performance.now();
const deadline = started + durationMs;
const elapsedS = () => (performance.now() - started) / 1000;
let lastGcS = -Infinity;
let sampling = false;

async function takeSample() {
  if (sampling) return; // an IPC reply slower than the period: skip a beat rather than pile up
  sampling = true;
  try {
    const t = elapsedS();
    const gc = t - lastGcS >= gcEveryS;
    if (gc) lastGcS = t;
    const s = await gateway.ipc('sample', { gc });
    samples.push({
      t,
      sched: schedMillis(gateway.pid),
      rss: s.memory.rss,
      heapUsed: s.memory.heapUsed,
      heapTotal: s.memory.heapTotal,
      external: s.memory.external,
      arrayBuffers: s.memory.arrayBuffers,
      liveHeap: s.liveHeap ?? undefined,
      resources: s.resources,
      eld: s.eld,
      videoTasks: s.videoTasks,
      requests: tally.total.requests,
      unexpected: tally.total.unexpected,
    });
  } finally {
    sampling = false;
  }
}

let logged = { requests: 0, t: 0 };
function progress() {
  const s = samples[samples.length - 1];
  if (!s) return;
  const { requests, ok, aborted, expected, unexpected } = tally.total;
  const pct = (/** @type {number} */ n) => ((100 * n) / Math.max(1, requests)).toFixed(1);
  const rate = ((s.requests - logged.requests) / Math.max(1, s.t - logged.t)).toFixed(0);
  logged = { requests: s.requests, t: s.t };
  log(
    `${Math.floor(s.t / 60)}:${String(Math.floor(s.t % 60)).padStart(2, '0')}  ${requests} requests (${rate}/s lately), ok ${pct(ok)}%, aborted ${pct(aborted)}%, expected errors ${pct(expected)}%, unexpected ${unexpected}; RSS ${MB(s.rss)} MB, heap ${MB(s.heapUsed)} MB, event-loop p99 ${s.eld.p99Ms.toFixed(1)} ms`,
  );
}

await takeSample();
const sampleNow = () => void takeSample().catch((e) => log(`sample failed: ${e.message}`));
const sampler = setInterval(sampleNow, opts.sampleS * 1000);
const progressTimer = setInterval(progress, 60_000);
// The samples cover the load's window; requests still in flight at its end drain unsampled.
const windowEnd = new Promise((resolveEnd) =>
  setTimeout(() => {
    clearInterval(sampler);
    clearInterval(progressTimer);
    resolveEnd(takeSample().catch((e) => log(`sample failed: ${e.message}`)));
  }, durationMs),
);

// Requests start at most `rate` per second and at most `concurrency` at a time: the pacing is
// shared, so a slow answer delays its worker, not the others.
const interval = 1000 / opts.rate;
let nextAt = performance.now();
/** @type {Connection[]} */
const conns = [];
async function worker() {
  const conn = new Connection(gateway.port);
  conns.push(conn);
  for (;;) {
    const t = performance.now();
    const at = Math.max(t, nextAt);
    nextAt = at + interval;
    if (at >= deadline) break;
    if (at > t) await sleep(at - t);
    try {
      tally.add(await mix.next(conn));
    } catch (error) {
      // The mix reports failures as observations; anything thrown is a bug of the soak itself.
      log(`soak bug: ${/** @type {Error} */ (error).stack}`);
      tally.add({ route: 'soak', shape: 'json', fault: undefined, abort: false, status: 0, error: /** @type {Error} */ (error), latencyMs: 0 });
    }
  }
  conn.close();
}
log(`load: ${opts.minutes} min, ≤ ${opts.rate} req/s, ≤ ${opts.concurrency} in flight, faults on ${(opts.faultRate * 100).toFixed(0)}% of requests`);
await Promise.all(Array.from({ length: opts.concurrency }, worker));
await windowEnd;
const loadMs = durationMs;
const drainMs = Math.max(0, performance.now() - deadline);
progress();

// Quiet: in-flight work drains, pooled upstream sockets stay; then a last sample with a GC.
for (const conn of conns) conn.close();
await sleep(3000);
lastGcS = -Infinity;
await takeSample();
const quiet = samples.pop();
// What each store holds: its entries, and the live heap freed by emptying it (the video task
// store first, which gives what one task holds).
/** @type {import('./lib/store-inventory.mjs').StoreRow[]} */
const stores = (await gateway.ipc('stores')).rows;
const taskRow = /** @type {import('./lib/store-inventory.mjs').StoreRow} */ (stores.find((row) => row.name === 'video task store'));
const tasksHeld = taskRow.entries.tasks ?? 0;
const bytesPerTask = tasksHeld > 0 ? taskRow.bytes / tasksHeld : NaN;
const gatewaySummary = await gateway.ipc('summary');
const mockStats = await mock.ipc('stats');
const rssEnd = rssBytes(gateway.pid);
await gateway.ipc('shutdown').catch(() => undefined);
await mock.ipc('shutdown').catch(() => undefined);
await sleep(200);
stopAll();
meta.loadavgEnd = os.loadavg();

// ---------------------------------------------------------------------------------------------
// Verdict and report

const warmupS = (opts.warmup * loadMs) / 1000;
const memory = memoryVerdict(samples, warmupS, bytesPerTask);
const problems = [];
if (tally.total.unexpected > 0) problems.push(`${tally.total.unexpected} unexpected errors`);
for (const entry of gatewaySummary.thrown) problems.push(`${entry.count} × ${entry.kind} in the gateway`);
for (const entry of gatewaySummary.logs) if (entry.level === 'error') problems.push(`the gateway logged "${entry.message}" ${entry.count} times`);
const stderrCount = [...stderrLines.values()].reduce((a, b) => a + b, 0);
if (stderrCount > 0) problems.push(`${stderrCount} lines on the gateway's stderr`);
if (mockStats.open > 0) problems.push(`${mockStats.open} upstream streams still open after the run (not cancelled)`);
if (!memory.plateau) {
  problems.push(
    memory.net?.plateau
      ? `memory does not plateau: the video task store grows (${tasksHeld} tasks held at the end); net of it, memory plateaus`
      : 'memory does not plateau',
  );
}

const routes = [...tally.routes].map(([route, { latencies, ...counts }]) => ({ route, ...counts, latency: summarize(latencies) }));
const kinds = [...tally.kinds].map(([kind, entry]) => ({ kind, ...entry }));
const result = {
  meta,
  loadMs,
  drainMs,
  tasks: { held: tasksHeld, bytesPerTask, liveHeapWithout: taskRow.liveHeapAfter },
  stores,
  stderr: [...stderrLines].map(([line, count]) => ({ line, count })),
  warmupS,
  total: tally.total,
  routes,
  kinds,
  samples,
  quiet,
  rssEnd,
  gateway: gatewaySummary,
  mock: mockStats,
  memory,
  problems,
};
mkdirSync(opts.out, { recursive: true });
const markdown = renderSoakReport(result);
writeFileSync(join(opts.out, 'soak-latest.md'), markdown);
writeFileSync(
  join(opts.out, 'soak-latest.json'),
  JSON.stringify(result, (_, v) => (typeof v === 'number' && !Number.isFinite(v) ? null : v), 2),
);
console.log(markdown);
log(`report: ${join(opts.out, 'soak-latest.md')} (and .json); ${problems.length ? `FAILED: ${problems.join('; ')}` : 'passed'}`);
clearTimeout(watchdog);
process.exit(problems.length ? 1 : 0);
