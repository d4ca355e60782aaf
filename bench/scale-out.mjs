#!/usr/bin/env node
// The scale-out bench: `npm run bench:scale-out` (builds first). See docs/benchmark.md, "Scale-out".
//
//   node bench/scale-out.mjs [--redis URL] [--cluster host:port,…] [--processes 1,2,4]
//                            [--topologies single,cluster] [--quick] [--out DIR] …
//
// For each Redis topology (one node, a cluster) and each number of gateway processes, starts
// that many gateways sharing one RedisLimitEngine, in front of one mock upstream, and this
// runner spreads requests over them in turn (round robin). It measures JSON requests per second
// (all processes and each), latency, and the CPU of every process; then sends bursts far over a
// key's requests-per-minute limit and a key's dollar budget, and checks that no request got past
// the limit and the budget was not overspent beyond what the documented rule allows. Nothing is
// pinned: all the processes share the machine's cores, as they would on one host.
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gitInfo, startChild, stopAll } from './lib/children.mjs';
import { buildRequest } from './lib/http-client.mjs';
import { body } from './lib/payloads.mjs';
import { cpuMicros, selfCpuMicros } from './lib/proc.mjs';
import { cluster, deleteKeys, serverPids, singleNode } from './lib/redis-servers.mjs';
import { roundRobin } from './lib/round-robin.mjs';
import { renderScaleOutChart } from './lib/scale-out-chart.mjs';
import { BUDGET_KEY, FAILURES_TO_OPEN, LIMIT_KEY, LOAD_KEY, MODEL, REQUEST_NANO_USD, REROUTE_MODEL } from './lib/scale-out-keys.mjs';
import { renderScaleOutMarkdown } from './lib/scale-out-report.mjs';
import { acrossRounds, shuffle, summarize } from './lib/stats.mjs';

const here = dirname(fileURLToPath(import.meta.url));

// ---------------------------------------------------------------------------------------------
// Options

const argv = process.argv.slice(2);
const flag = (/** @type {string} */ name) => argv.includes(name);
const value = (/** @type {string} */ name, /** @type {string} */ fallback) => {
  const i = argv.indexOf(name);
  return i >= 0 && argv[i + 1] !== undefined ? /** @type {string} */ (argv[i + 1]) : fallback;
};
if (flag('--help') || flag('-h')) {
  console.log(`node bench/scale-out.mjs [options]   (npm run bench:scale-out -- [options] builds dist/ first)
  --redis URL            the single-node Redis (default: a throwaway redis-server on a free port)
  --cluster h:p,h:p,…    the cluster's seed list (default: a throwaway 3-master cluster, .ci/redis-cluster)
  --topologies a,b       single, cluster (default both)
  --processes 1,2,4      gateway processes per configuration (default 1,2,4)
  --rounds N             rounds: each configuration started, warmed up and measured once a round,
                         in a random order (default 3; --quick: 1)
  --window MS            the measurement window (default 4000; --quick: 2000)
  --concurrency N        requests in flight, over all processes (default 64)
  --limit N              the limited key's requests per minute (default 500); the burst sends 6×
  --budget-requests N    the budget key's dollars, in requests (default 200); the burst sends 10×
  --no-reroute           skip the reroute check (a failure one process sees, the others avoiding it)
  --out DIR              results: DIR/scale-out.json, .md, .svg (default bench/results)
  --quick                one short window per configuration (numbers are noisy)`);
  process.exit(0);
}
const quick = flag('--quick');
const limit = Number(value('--limit', '500'));
const budgetRequests = Number(value('--budget-requests', '200'));
const opts = {
  quick,
  redis: value('--redis', ''),
  cluster: value('--cluster', ''),
  topologies: /** @type {Array<'single' | 'cluster'>} */ (value('--topologies', 'single,cluster').split(',').filter(Boolean)),
  processes: value('--processes', '1,2,4').split(',').map(Number),
  rounds: Number(value('--rounds', quick ? '1' : '3')),
  windowMs: Number(value('--window', quick ? '2000' : '4000')),
  warmupRequests: quick ? 1000 : 4000,
  concurrency: Number(value('--concurrency', '64')),
  limit,
  limitBurst: limit * 6,
  budgetRequests,
  budgetBurst: budgetRequests * 10,
  out: resolve(value('--out', join(here, 'results'))),
  reroute: !flag('--no-reroute'),
  rerouteConcurrency: 16,
  rerouteBeforeMs: 1000,
  rerouteAfterMs: quick ? 3000 : 5000,
  /** Each reroute check with the bus runs this many times, each with fresh processes. */
  rerouteRepeats: quick ? 1 : 3,
};
for (const name of opts.topologies) if (name !== 'single' && name !== 'cluster') throw new Error(`--topologies: unknown ${name}`);
const budgetUsd = (budgetRequests * REQUEST_NANO_USD) / 1e9;

const log = (/** @type {string} */ message) => console.error(`[scale-out ${new Date().toISOString().slice(11, 19)}] ${message}`);
const WATCHDOG_MIN = quick ? 8 : 20;
const watchdog = setTimeout(() => {
  console.error(`scale-out: still running after ${WATCHDOG_MIN} min; stopping`);
  stopAll();
  process.exit(2);
}, WATCHDOG_MIN * 60_000);
watchdog.unref();

const dist = process.env.INFERGATE_DIST ? resolve(process.env.INFERGATE_DIST) : resolve(here, '../dist');
/** @type {typeof import('infergate/redis')} */
const redisEntry = await import(pathToFileURL(resolve(dist, 'redis.js')).href);
const { RedisLimitEngine } = redisEntry;
/** Whether this build shares deployment health (issue 24's RedisHealthBus): the reroute check needs it. */
const hasHealthBus = 'RedisHealthBus' in redisEntry;

// ---------------------------------------------------------------------------------------------
// One configuration: N gateways on one topology

const runId = `${Date.now().toString(36)}${process.pid.toString(36)}`;
/** @param {string} key @param {string} [model] */
const requestFor = (key, model = MODEL) =>
  buildRequest('/v1/chat/completions', { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body('chat', model, false), '127.0.0.1');

/** CPU time of each process in µs, by name. @param {Record<string, number>} pids */
function cpuNow(pids) {
  return Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, name === 'load' ? selfCpuMicros() : safeCpu(pid)]));
}
/**
 * CPU of each process as a percentage of one core over a time.
 * @param {Record<string, number>} before @param {Record<string, number>} after @param {number} seconds
 */
function cpuPercent(before, after, seconds) {
  return Object.fromEntries(Object.entries(after).map(([name, micros]) => [name, ((micros - (before[name] ?? NaN)) / (seconds * 1e6)) * 100]));
}

/** @param {number} pid */
function safeCpu(pid) {
  try {
    return cpuMicros(pid);
  } catch {
    return NaN; // a server whose /proc this user cannot read
  }
}

/** Waits for a fresh minute when fewer than `marginMs` are left: the limit's windows are the clock's minutes. */
async function freshMinute(marginMs = 10_000) {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < marginMs) {
    log(`waiting ${(left / 1000).toFixed(1)} s for a fresh minute`);
    await new Promise((r) => setTimeout(r, left + 200));
  }
}

/** @typedef {{ ipc: (cmd: string, args?: unknown) => Promise<any>, pid: number, port: number }} Child */

/**
 * Starts `n` gateway processes on the topology, their keys under `prefix`; `extra` adds
 * arguments (the reroute check's), `{index}` in them replaced by each process's index.
 * @param {import('./lib/redis-servers.mjs').RedisTopology} topology @param {Child} mock
 * @param {string} prefix @param {number} n @param {string[]} [extra]
 */
function startGateways(topology, mock, prefix, n, extra = []) {
  const args = [`http://127.0.0.1:${mock.port}`, '--prefix', prefix, ...topology.gatewayArgs, '--limit', String(limit), '--budget-usd', String(budgetUsd)];
  const script = join(here, 'scale-out-gateway.mjs');
  return Promise.all(
    Array.from({ length: n }, (_, i) => startChild(`gateway ${i}`, script, [...args, ...extra.map((a) => a.replace('{index}', String(i)))], undefined)),
  );
}

/**
 * Stops the gateways and deletes the keys they wrote.
 * @param {Array<Child & { child: import('node:child_process').ChildProcess }>} gateways
 * @param {import('./lib/redis-servers.mjs').RedisTopology} topology @param {string} prefix @param {string} what
 */
async function stopGateways(gateways, topology, prefix, what) {
  await Promise.all(gateways.map((g) => g.ipc('shutdown').catch(() => {})));
  for (const g of gateways) g.child.kill('SIGKILL');
  const deleted = await deleteKeys(topology, prefix).catch((error) => log(`could not delete the run's keys (${prefix}*): ${error.message}`));
  log(`${what}: done, ${deleted ?? '?'} keys of the run deleted`);
}

/**
 * @typedef {object} Config  one topology × processes, its gateways running through the rounds
 * @property {import('./lib/redis-servers.mjs').RedisTopology} topology
 * @property {number[]} redisPids
 * @property {number} n
 * @property {string} prefix
 * @property {Array<Child & { child: import('node:child_process').ChildProcess }>} gateways
 * @property {any[]} windows
 * @property {any} [limit]
 * @property {any} [budget]
 */

/**
 * Starts a configuration's gateways and warms them up: a process's first few thousand requests
 * cost it several times the CPU of later ones (its code being compiled), so each gets the same
 * number, whatever their count; windows measured earlier would count the compiling against the
 * configurations with more processes.
 * @param {import('./lib/redis-servers.mjs').RedisTopology} topology @param {number[]} redisPids
 * @param {Child} mock @param {number} n
 * @returns {Promise<Config>}
 */
async function startConfig(topology, redisPids, mock, n) {
  const prefix = `infergate-bench-${runId}-${topology.name}-${n}:`;
  const gateways = await startGateways(topology, mock, prefix, n);
  const ports = gateways.map((g) => g.port);
  await roundRobin({ ports, request: requestFor(LOAD_KEY.key), concurrency: opts.concurrency, total: opts.warmupRequests * n, durationMs: 120_000 });
  log(`${topology.name} × ${n}: started, warmed up with ${opts.warmupRequests} requests per process`);
  return { topology, redisPids, n, prefix, gateways, windows: [] };
}

/**
 * One measurement window of a configuration: requests per second (all, each process), latency,
 * and the CPU of every process.
 * @param {Config} config @param {Child} mock @param {number} round
 */
async function measureWindow({ topology, redisPids, n, gateways }, mock, round) {
  const ports = gateways.map((g) => g.port);
  const load = requestFor(LOAD_KEY.key);
  // A short run first: its connections to the gateways (the windows' are new) and the processes awake.
  await roundRobin({ ports, request: load, concurrency: opts.concurrency, total: 100 * n, durationMs: 10_000 });
  /** @type {Record<string, number>} */
  const pids = {
    mock: mock.pid,
    load: process.pid,
    ...Object.fromEntries(gateways.map((g, i) => [`gateway${i}`, g.pid])),
    ...Object.fromEntries(redisPids.map((pid, i) => [`redis${i}`, pid])),
  };
  const loadAverage = os.loadavg()[0];
  const before = cpuNow(pids);
  const run = await roundRobin({ ports, request: load, concurrency: opts.concurrency, durationMs: opts.windowMs });
  const seconds = run.elapsedMs / 1000;
  const cpuPct = cpuPercent(before, cpuNow(pids), seconds);
  const answered = run.tallies.reduce((sum, t) => sum + t.requests, 0);
  const latency = summarize(run.tallies.flatMap((t) => t.latencies));
  const gatewayCpu = Object.entries(cpuPct).filter(([name]) => name.startsWith('gateway'));
  const window = {
    round,
    totalRps: answered / seconds,
    perProcessRps: run.tallies.map((t) => t.requests / seconds),
    p50: latency.p50,
    p99: latency.p99,
    cpuPct,
    /** Every gateway's CPU over the requests answered. */
    gatewayCpuUsPerRequest: (gatewayCpu.reduce((sum, [, pct]) => sum + pct, 0) * seconds * 1e4) / answered,
    failed: run.sent - answered,
    statuses: run.statuses,
    firstError: run.firstError,
    loadAverage,
  };
  log(
    `${topology.name} × ${n}, round ${round}: ${window.totalRps.toFixed(0)} req/s, p99 ${latency.p99.toFixed(1)} ms, load average ${loadAverage?.toFixed(1)}`,
  );
  return window;
}

/**
 * How fast a failure one process sees reroutes the others. The model `bench-reroute` has two
 * deployments, `flaky` and `steady`; traffic spread over the processes uses both. Then `flaky`
 * fails process 0's calls only (500s: the gateway retries them on `steady`), so the other
 * processes see nothing wrong there: they stop calling it only when process 0's breaker opens
 * and they hear it on the health bus. From the flaky upstream's log, on its one clock: the first
 * failure, process 0's last call (its own breaker open), and the others' last call. Without the
 * bus (`bus` false, the control), the others never stop.
 * @param {import('./lib/redis-servers.mjs').RedisTopology} topology @param {Child} mock
 * @param {Child} flaky @param {number} n @param {boolean} bus
 */
async function reroute(topology, mock, flaky, n, bus) {
  const prefix = `infergate-bench-${runId}-${topology.name}-${n}-reroute${bus ? '' : '-nobus'}:`;
  const extra = ['--flaky', `http://127.0.0.1:${flaky.port}`, '--index', '{index}', ...(bus ? ['--health-bus'] : [])];
  await flaky.ipc('reset');
  const gateways = await startGateways(topology, mock, prefix, n, extra);
  const ports = gateways.map((g) => g.port);
  try {
    const request = requestFor(LOAD_KEY.key, REROUTE_MODEL);
    await roundRobin({ ports, request, concurrency: opts.rerouteConcurrency, total: 200 * n, durationMs: 30_000 });
    await flaky.ipc('reset');
    const traffic = roundRobin({ ports, request, concurrency: opts.rerouteConcurrency, durationMs: opts.rerouteBeforeMs + opts.rerouteAfterMs });
    await new Promise((r) => setTimeout(r, opts.rerouteBeforeMs));
    const failingFrom = await flaky.ipc('fail', { process: 0 });
    const run = await traffic;
    const windowEnd = performance.timeOrigin + performance.now();
    /** @type {Array<{ at: number, process: number, failed: boolean }>} */
    const calls = await flaky.ipc('calls');
    const before = calls.filter((c) => c.at < failingFrom);
    const after = calls.filter((c) => c.at >= failingFrom);
    const failures = after.filter((c) => c.failed);
    const firstFailure = failures[0]?.at ?? NaN;
    // Process 0's breaker opens on the answer to this call; calls it had already started may
    // still reach the upstream after it, which its last call tells.
    const opening = failures[FAILURES_TO_OPEN - 1]?.at ?? NaN;
    const failingLast = failures[failures.length - 1]?.at ?? NaN;
    // The others' calls from the first failure on (none: they had turned away from it already,
    // for its latency, before anything failed: the check then shows nothing).
    const others = calls.filter((c) => c.process !== 0 && c.at >= firstFailure);
    const othersLast = others.length > 0 ? Math.max(...others.map((c) => c.at)) : NaN;
    const ok = run.statuses['200'] ?? 0;
    const result = {
      topology: topology.name,
      processes: n,
      bus,
      callsBefore: Array.from({ length: n }, (_, i) => before.filter((c) => c.process === i).length),
      failedCalls: failures.length,
      /** From the first failure to the one that opens process 0's breaker. */
      openingMs: opening - firstFailure,
      /** From the first failure to process 0's last call. */
      failingStopMs: failingLast - firstFailure,
      othersCallsAfter: others.length,
      /** From the first failure to the last call any other process made. */
      rerouteMs: othersLast - firstFailure,
      /** From the failure that opens process 0's breaker to the others' last call. */
      afterOpenMs: othersLast - opening,
      /** The others made no call for this long before the window's end: rerouted when ≥ 1 s. */
      quietMs: windowEnd - othersLast,
      rerouted: others.length > 0 && windowEnd - othersLast >= 1000,
      windowAfterMs: windowEnd - firstFailure,
      /** The others' calls to flaky per second before the failure: how finely their stop is seen. */
      othersRateBefore: (before.filter((c) => c.process !== 0).length * 1000) / opts.rerouteBeforeMs,
      clientErrors: run.sent - ok,
    };
    log(
      `reroute, ${topology.name} × ${n}, ${bus ? 'health bus' : 'no bus'}: process 0's breaker opened after ${result.openingMs.toFixed(0)} ms (${failures.length} failures), ` +
        `the others ${result.rerouted ? `after ${result.rerouteMs.toFixed(0)} ms` : 'did not stop'} (${others.length} calls after the first failure)`,
    );
    return result;
  } finally {
    await stopGateways(gateways, topology, prefix, `reroute ${topology.name} × ${n}`);
  }
}

/**
 * A burst far over the limited key's requests per minute, spread over the processes: the 200s
 * must be exactly the limit (over it: the shared count let a request through; under it: a
 * request failed after admission), and the mock must have been called once per 200.
 * @param {number[]} ports @param {{ ipc: (cmd: string) => Promise<any> }} mock
 */
async function limitBurst(ports, mock) {
  for (let attempt = 1; ; attempt++) {
    await freshMinute();
    const minute = Math.floor(Date.now() / 60_000);
    const upstreamBefore = (await mock.ipc('stats')).requests;
    const run = await roundRobin({ ports, request: requestFor(LIMIT_KEY.key), concurrency: opts.concurrency, total: opts.limitBurst });
    // A burst that reached the next minute had two windows' worth of requests to admit: again.
    if (Math.floor(Date.now() / 60_000) !== minute && attempt < 3) {
      log('the limit burst straddled a minute; again in the next one');
      continue;
    }
    const ok = run.statuses['200'] ?? 0;
    const upstream = (await mock.ipc('stats')).requests - upstreamBefore;
    return {
      limit,
      sent: run.sent,
      ok,
      refused: run.statuses['429'] ?? 0,
      other: run.sent - ok - (run.statuses['429'] ?? 0),
      okPerProcess: run.tallies.map((t) => t.statuses['200'] ?? 0),
      upstream,
      exact: ok === limit && upstream === ok,
      over: ok > limit,
      elapsedMs: run.elapsedMs,
    };
  }
}

/**
 * A burst far over the budget key's dollars. A budget is checked before a request and counted
 * after it (docs/policies.md, "Budgets"): the requests admitted before the spend of those ahead
 * of them reached Redis all pass, so the budget is overshot by the requests in flight at the
 * gateways, which counts those answered whose spend is still on its way, not only the client's.
 * What the rule promises, and what is checked: every request admitted saw budget left
 * (`x-infergate-budget-remaining-usd` > 0, the spend as of its admission), at least the budget's
 * worth were admitted, and the spend read back is exactly the admitted requests' cost.
 * @param {number[]} ports @param {import('./lib/redis-servers.mjs').RedisTopology} topology @param {string} prefix
 */
async function budgetBurst(ports, topology, prefix) {
  const run = await roundRobin({
    ports,
    request: requestFor(BUDGET_KEY.key),
    concurrency: opts.concurrency,
    total: opts.budgetBurst,
    watch: 'x-infergate-budget-remaining-usd',
  });
  const engine = new RedisLimitEngine({
    ...(topology.name === 'cluster' ? { cluster: { nodes: topology.where.split(',') } } : { url: topology.where }),
    keyPrefix: prefix,
  });
  const spentUsd = await engine.budgetSpent({ scope: 'key', owner: BUDGET_KEY.id, usd: budgetUsd }, Date.now());
  await engine.close();
  const ok = run.statuses['200'] ?? 0;
  const remaining = run.tallies.flatMap((t) => t.watched).map(Number);
  const admittedWithNothingLeft = remaining.filter((usd) => !(usd > 0)).length;
  const spentNanoUsd = Math.round(spentUsd * 1e9);
  return {
    budgetUsd,
    budgetRequests,
    sent: run.sent,
    ok,
    refused: run.statuses['429'] ?? 0,
    other: run.sent - ok - (run.statuses['429'] ?? 0),
    spentUsd,
    overshootRequests: Math.max(0, ok - budgetRequests),
    overshootUsd: Math.max(0, spentUsd - budgetUsd),
    /** The least budget left that an admitted request saw, in dollars. */
    leastRemainingUsd: Math.min(...remaining),
    admittedWithNothingLeft,
    spendExact: spentNanoUsd === ok * REQUEST_NANO_USD,
    withinRule: spentNanoUsd === ok * REQUEST_NANO_USD && admittedWithNothingLeft === 0 && ok >= budgetRequests,
  };
}

/**
 * Medians across the rounds' windows, min–max as the spread; per process: each process's
 * median, and the spread from the slowest to the fastest.
 * @param {any[]} windows @param {number} n
 */
function summarizeWindows(windows, n) {
  const across = (/** @type {(w: any) => number} */ pick) => acrossRounds(windows.map(pick));
  const names = Object.keys(windows[0]?.cpuPct ?? {});
  const cpu = (/** @type {string} */ name) => across((w) => w.cpuPct[name]).median;
  return {
    totalRps: across((w) => w.totalRps),
    perProcessRps: acrossRounds(Array.from({ length: n }, (_, i) => across((w) => w.perProcessRps[i]).median)),
    p50: across((w) => w.p50),
    p99: across((w) => w.p99),
    gatewayCpuPct: names.filter((name) => name.startsWith('gateway')).map(cpu),
    gatewayCpuUsPerRequest: across((w) => w.gatewayCpuUsPerRequest),
    redisCpuPct: names.filter((name) => name.startsWith('redis')).reduce((sum, name) => sum + cpu(name), 0),
    mockCpuPct: cpu('mock'),
    loadCpuPct: cpu('load'),
    failed: windows.reduce((sum, w) => sum + w.failed, 0),
    loadAverage: across((w) => w.loadAverage),
  };
}

// ---------------------------------------------------------------------------------------------
// The run

mkdirSync(opts.out, { recursive: true });
const git = gitInfo();
const started = new Date();
log(`run ${runId}: ${opts.topologies.join(', ')} × ${opts.processes.join(', ')} processes, ${opts.rounds} rounds of ${opts.windowMs} ms windows`);
const mock = await startChild('mock', join(here, 'mock-upstream.mjs'), [], undefined);
await mock.ipc('config', { ttfbMs: 0, words: 40 });
const flaky = await startChild('flaky upstream', join(here, 'flaky-upstream.mjs'), [], undefined);

const reroutes = [];
/** @type {Record<string, { where: string, throwaway: boolean, servers: number }>} */
const topologies = {};
const busSkipped = hasHealthBus ? undefined : `this build (${dist}) has no RedisHealthBus`;
/** @type {Array<{ topology: import('./lib/redis-servers.mjs').RedisTopology, redisPids: number[] }>} */
const redises = [];
/** @type {Config[]} */
const configs = [];
try {
  for (const name of opts.topologies) {
    const topology = name === 'single' ? await singleNode(opts.redis || undefined) : await cluster(opts.cluster || undefined);
    const redisPids = await serverPids(topology);
    redises.push({ topology, redisPids });
    topologies[name] = { where: topology.where, throwaway: topology.throwaway, servers: redisPids.length };
    log(`${name}: ${topology.where}${topology.throwaway ? ' (started for this run)' : ''}`);
  }
  // Every configuration's gateways run through all the rounds (idle while another is measured).
  for (const { topology, redisPids } of redises) for (const n of opts.processes) configs.push(await startConfig(topology, redisPids, mock, n));
  // Rounds of every configuration in a random order, so that the machine's other work (it is
  // shared) spreads over them rather than falling on a few.
  for (let round = 1; round <= opts.rounds; round++) {
    for (const config of shuffle([...configs])) config.windows.push(await measureWindow(config, mock, round));
  }
  for (const config of configs) {
    const ports = config.gateways.map((g) => g.port);
    config.limit = await limitBurst(ports, mock);
    config.budget = await budgetBurst(ports, config.topology, config.prefix);
    await stopGateways(config.gateways, config.topology, config.prefix, `${config.topology.name} × ${config.n}`);
  }
  for (const { topology } of redises) {
    const several = opts.reroute ? opts.processes.filter((n) => n > 1) : [];
    if (!busSkipped) for (const n of several) for (let r = 0; r < opts.rerouteRepeats; r++) reroutes.push(await reroute(topology, mock, flaky, n, true));
    // The control: the same without the bus, once (the largest count, first topology).
    if (topology === redises[0]?.topology && several.length > 0) reroutes.push(await reroute(topology, mock, flaky, Math.max(...several), false));
  }
} finally {
  for (const { gateways } of configs) for (const g of gateways) g.child.kill('SIGKILL');
  for (const { topology } of redises) topology.stop();
}
await Promise.all([mock.ipc('shutdown').catch(() => {}), flaky.ipc('shutdown').catch(() => {})]);
const results = configs.map(({ topology, n, windows, limit: l, budget: b }) => ({
  topology: topology.name,
  processes: n,
  windows,
  summary: summarizeWindows(windows, n),
  limit: /** @type {Awaited<ReturnType<typeof limitBurst>>} */ (l),
  budget: /** @type {Awaited<ReturnType<typeof budgetBurst>>} */ (b),
}));

const result = {
  meta: {
    date: started.toISOString(),
    commit: git.commit,
    dirty: git.dirty,
    ...(process.env.INFERGATE_DIST ? { dist: process.env.INFERGATE_DIST } : {}),
    machine: { cpu: os.cpus()[0]?.model, cores: os.cpus().length, node: process.version },
    options: opts,
    topologies,
    durationS: (Date.now() - started.getTime()) / 1000,
  },
  results,
  reroutes,
  ...(busSkipped && opts.reroute ? { busSkipped } : {}),
};
writeFileSync(join(opts.out, 'scale-out.json'), `${JSON.stringify(result, null, 2)}\n`);
writeFileSync(join(opts.out, 'scale-out.md'), renderScaleOutMarkdown(result));
writeFileSync(join(opts.out, 'scale-out.svg'), renderScaleOutChart(result));
log(`results in ${opts.out}/scale-out.{json,md,svg}`);

// Over the limit is the failure this bench is for; under it, or an upstream call count that
// differs, means requests failed after admission: the check proved nothing, so it fails too.
const broken = results.filter((r) => !r.limit.exact || !r.budget.withinRule);
if (busSkipped && opts.reroute) log(`reroute check with the health bus not run: ${busSkipped}`);
for (const { topology, processes, limit: l, budget: b } of broken) {
  console.error(
    `SCALE-OUT FAILED: ${topology} × ${processes}: ${l.ok} answers (${l.upstream} upstream calls, ${l.other} failed) for a limit of ${l.limit}` +
      `${l.over ? ' — OVER THE LIMIT' : ''}; budget: ${b.ok} admitted for ${b.budgetRequests}, ${b.admittedWithNothingLeft} of them with no budget left, spent $${b.spentUsd} (${b.spendExact ? 'exactly their cost' : 'NOT their cost'})`,
  );
}
stopAll();
process.exit(broken.length > 0 ? 1 : 0);
