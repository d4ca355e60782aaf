#!/usr/bin/env node
// The benchmark runner: `npm run bench` (builds first). See docs/benchmark.md.
//
//   node bench/run.mjs [--quick] [--peers] [--metrics] [--guardrails] [--out DIR] [--rounds N] [--window MS]
//                      [--cells a,b] [--profile] [--no-capacity] [--no-image]
//
// Processes: the mock upstream and this runner (the load generator) share core 0; the gateway
// under test, the floor proxy and the peer gateways each run as one process on core 1 (`taskset`),
// one of them loaded at a time. Arms are interleaved in rounds, in a random order per round.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './lib/free-port.mjs';
import { children, GATEWAY_CORE, gitInfo, LOAD_CORE, nodeCommand, pinned, pinSelf, startChild, stopAll } from './lib/children.mjs';
import { Connection } from './lib/http-client.mjs';
import { closedLoop, exchange, holdStreams, openLoop, StreamTracker, streamLoop } from './lib/load.mjs';
import { cells, checkAnswer, GUARDRAIL_ARMS, imageBase64, target } from './lib/payloads.mjs';
import { installPeer, peerLaunch, peerSpecs } from './lib/peer.mjs';
import { rssBytes, withCpu } from './lib/proc.mjs';
import { acrossRounds, shuffle, summarize } from './lib/stats.mjs';
import { renderChart } from './lib/chart.mjs';
import { renderMarkdown } from './lib/report.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '..');

// ---------------------------------------------------------------------------------------------
// Options

const argv = process.argv.slice(2);
const flag = (/** @type {string} */ name) => argv.includes(name);
const value = (/** @type {string} */ name, /** @type {string} */ fallback) => {
  const i = argv.indexOf(name);
  return i >= 0 && argv[i + 1] !== undefined ? /** @type {string} */ (argv[i + 1]) : fallback;
};
if (flag('--help') || flag('-h')) {
  console.log(`node bench/run.mjs [options]   (npm run bench -- [options] builds dist/ first)
  --quick            short windows, one round, fewer capacity steps: a smoke run (numbers are noisy)
  --peers            also run the peer gateways, installed into a temp folder: @portkey-ai/gateway
                     (chat passthrough) and @musistudio/claude-code-router (messages-to-chat)
  --metrics          also run the gateway with metrics on (arm infergate-metrics: metricsHandler,
                     serialized every second as a scrape would), on every cell
  --guardrails       also run the gateway with an output guardrail masking the answer, on every
                     cell: arms infergate-regex (a regex guardrail) and infergate-secrets (secrets)
  --out DIR          where results go (default bench/results)
  --rounds N         rounds of interleaved arms (default 3; --quick: 1)
  --window MS        measurement window (default 5000; --quick: 1000)
  --rate N           request rate of the open-loop latency run (default 1000 req/s)
  --cells a,b        gateway cells (default ${defaultCells().join(',')}; also responses-pass, messages-pass,
                     responses-to-messages, chat-to-responses, messages-to-responses)
  --profile          run the gateway with --cpu-prof (profile written to DIR/profiles/)
  --no-capacity      skip the paced-streams capacity steps
  --no-image         skip the event-loop stall under image uploads`);
  process.exit(0);
}
function defaultCells() {
  return ['chat-pass', 'messages-to-chat', 'responses-to-chat', 'chat-to-messages'];
}

const quick = flag('--quick');
const opts = {
  quick,
  peers: flag('--peers'),
  metrics: flag('--metrics'),
  guardrails: flag('--guardrails'),
  out: resolve(value('--out', join(here, 'results'))),
  rounds: Number(value('--rounds', quick ? '1' : '3')),
  windowMs: Number(value('--window', quick ? '1000' : '5000')),
  warmupMs: quick ? 400 : 1500,
  cells: value('--cells', defaultCells().join(',')).split(',').filter(Boolean),
  profile: flag('--profile'),
  capacity: !flag('--no-capacity'),
  image: !flag('--no-image'),
  pacedConcurrency: quick ? 20 : 50,
  pacedChunks: 20,
  burstChunks: 200,
  burstConcurrency: 16,
  openLoopRate: Number(value('--rate', '1000')),
  capacitySteps: quick ? [250, 1000] : [250, 500, 1000, 1500, 2000, 3000],
  capacityChunks: quick ? 100 : 200,
  intervalMs: 20,
  imageStreams: 200,
  imageSizes: [5 * 1024 * 1024, 20 * 1024 * 1024],
};
for (const cell of opts.cells) if (!cells[cell]) throw new Error(`unknown cell ${cell} (have ${Object.keys(cells).join(', ')})`);
if (!opts.cells.includes('chat-pass')) opts.cells.unshift('chat-pass');

// Every run stops by itself: a watchdog ends it (and its children) if something hangs.
const WATCHDOG_MS = quick ? 15 * 60_000 : 60 * 60_000;
const watchdog = setTimeout(() => {
  console.error(`bench: still running after ${WATCHDOG_MS / 60_000} min; stopping`);
  stopAll();
  process.exit(2);
}, WATCHDOG_MS);
watchdog.unref();

const log = (/** @type {string} */ message) => console.error(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}`);
const sleep = (/** @type {number} */ ms) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------------
// Processes

const cores = os.cpus().length;
pinSelf();
process.on('SIGINT', () => {
  stopAll();
  process.exit(130);
});

/** Waits until something accepts connections on a port. @param {number} port @param {number} timeoutMs */
async function waitForPort(port, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const ok = await new Promise((r) => {
      const socket = net.connect({ port, host: '127.0.0.1' });
      socket.once('connect', () => {
        socket.destroy();
        r(true);
      });
      socket.once('error', () => r(false));
    });
    if (ok) return true;
    await sleep(100);
  }
  return false;
}

// ---------------------------------------------------------------------------------------------
// Environment

const meta = {
  date: new Date().toISOString(),
  machine: {
    cores,
    cpu: os.cpus()[0]?.model?.trim() ?? 'unknown',
    memoryGB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    os: `${os.type()} ${os.release()}`,
  },
  ...gitInfo(),
  /** The build the gateway ran when it was not this tree's dist/. @type {string | undefined} */
  dist: undefined,
  pinned,
  mode: quick ? 'quick' : 'full',
  options: opts,
  loadavgStart: os.loadavg(),
  /** @type {number[]} */
  loadavgEnd: [],
};

// ---------------------------------------------------------------------------------------------
// Main

const distDir = process.env.INFERGATE_DIST ? resolve(process.env.INFERGATE_DIST) : join(root, 'dist');
if (process.env.INFERGATE_DIST) meta.dist = distDir;
if (!existsSync(join(distDir, 'index.js'))) {
  console.error(`bench: ${distDir} has no index.js; run \`npm run build\` (or \`npm run bench\`, which builds first)`);
  process.exit(1);
}

log(
  `${meta.machine.cpu}, ${cores} cores, Node ${process.version}, commit ${meta.commit}${meta.dirty ? ' (dirty)' : ''}, ${pinned ? 'pinned' : 'NOT pinned'}, load average ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
if (!pinned) log('taskset or a second core is missing: processes are not pinned, numbers are not comparable with pinned runs');

const mock = await startChild('mock', join(here, 'mock-upstream.mjs'), [], LOAD_CORE);
const mockOrigin = `http://127.0.0.1:${mock.port}`;
const floor = await startChild('floor', join(here, 'floor-proxy.mjs'), [mockOrigin], GATEWAY_CORE);
const profileDir = join(opts.out, 'profiles');
if (opts.profile) mkdirSync(profileDir, { recursive: true });
const gateway = await startChild('infergate', join(here, 'gateway-server.mjs'), [mockOrigin], GATEWAY_CORE, {
  nodeArgs: opts.profile ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [],
});

// The same gateway with metrics on, measured on the same cells: what recording costs.
const metricsGateway = opts.metrics
  ? await startChild('infergate-metrics', join(here, 'gateway-server.mjs'), [mockOrigin, '--metrics'], GATEWAY_CORE)
  : undefined;
/** The gateway's other arms, each on every cell: metrics on, and each output guardrail. @type {Record<string, { pid: number, port: number }>} */
const variantArms = metricsGateway ? { 'infergate-metrics': metricsGateway } : {};
// The same gateway with an output guardrail that masks, measured on the same cells: what checking the answer costs.
if (opts.guardrails) {
  for (const [arm, type] of Object.entries(GUARDRAIL_ARMS)) {
    variantArms[arm] = await startChild(arm, join(here, 'gateway-server.mjs'), [mockOrigin, '--guardrails', type], GATEWAY_CORE);
  }
}

/** @typedef {keyof typeof peerSpecs} PeerName */
const peerNames = /** @type {PeerName[]} */ (Object.keys(peerSpecs));
const isPeer = (/** @type {string} */ arm) => Object.hasOwn(peerSpecs, arm);
/** @type {Partial<Record<PeerName, { name: string, pid: number, port: number }>>} */
const peerArms = {};
/** What each peer arm is in this run: its package and version, or why it did not run. @type {Record<string, string>} */
const peerStatus = {};
/** @type {(() => void)[]} */
const peerCleanups = [];
for (const name of peerNames) {
  const spec = peerSpecs[name];
  if (!opts.peers) {
    peerStatus[name] = 'not run: pass --peers';
    continue;
  }
  if (!opts.cells.includes(spec.cell)) {
    peerStatus[name] = `not run: its cell ${spec.cell} is not in --cells`;
    continue;
  }
  log(`installing the peer ${spec.package}@${spec.version} into a temporary folder…`);
  const installed = await installPeer(spec);
  if ('error' in installed) {
    peerStatus[name] = `not run: ${installed.error}`;
    continue;
  }
  const port = /** @type {number} */ (await freePort());
  const launch = peerLaunch(name, installed, { port, mockOrigin });
  peerCleanups.push(launch.cleanup);
  const { command, args } = nodeCommand(installed.entry, launch.args, GATEWAY_CORE);
  const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'], cwd: launch.cwd, env: launch.env });
  children.push(child);
  // The last words on stderr say why a peer that does not come up failed.
  let stderrTail = '';
  child.stderr?.on('data', (/** @type {Buffer} */ chunk) => void (stderrTail = (stderrTail + chunk.toString()).slice(-2000)));
  if (await waitForPort(port, 20_000)) {
    peerArms[name] = { name, pid: /** @type {number} */ (child.pid), port };
    peerStatus[name] = `${spec.package} ${installed.version}`;
  } else {
    const said = stderrTail.trim().split('\n').slice(-3).join(' ').slice(0, 300);
    peerStatus[name] = `not run: ${spec.package} ${installed.version} did not start listening in 20 s${said ? ` (${said})` : ''}`;
  }
}

/** @type {Record<string, { pid: number, port: number }>} */
const arms = {
  direct: { pid: mock.pid, port: mock.port },
  floor,
  infergate: gateway,
  ...variantArms,
  ...peerArms,
};

/** The cell an arm is warmed up and checked on: a peer's own, chat passthrough for the others. @param {string} arm */
const homeCell = (arm) => (isPeer(arm) ? peerSpecs[/** @type {PeerName} */ (arm)].cell : 'chat-pass');

/** Sets the mock's knobs. @param {Record<string, number>} knobs */
const mockConfig = (knobs) => mock.ipc('config', knobs);

/** @param {string} arm @param {string} cell @param {boolean} stream @param {string} [image] */
function targetFor(arm, cell, stream, image) {
  const { port } = /** @type {{ port: number }} */ (arms[arm]);
  return target({ arm, cell, stream, port, mockOrigin, ...(image ? { imageBase64: image } : {}) });
}

// The direct and floor arms are measured per upstream protocol; name them by the passthrough cell
// of that protocol so every measurement is keyed `arm/cell/mode`.
/** @param {string} cell */
const upstreamCell = (cell) =>
  ({ chat: 'chat-pass', messages: 'messages-pass', responses: 'responses-pass' })[/** @type {{ upstream: 'chat' }} */ (cells[cell]).upstream];

/** @type {{ arm: string, cell: string, mode: 'json' | 'stream' }[]} */
const units = [];
for (const mode of /** @type {const} */ (['json', 'stream'])) {
  for (const cell of new Set(opts.cells.map(upstreamCell))) {
    units.push({ arm: 'direct', cell, mode }, { arm: 'floor', cell, mode });
  }
  for (const cell of opts.cells) units.push({ arm: 'infergate', cell, mode });
  for (const arm of Object.keys(variantArms)) for (const cell of opts.cells) units.push({ arm, cell, mode });
  for (const name of Object.keys(peerArms)) units.push({ arm: name, cell: homeCell(name), mode });
}
const unitKey = (/** @type {{ arm: string, cell: string, mode: string }} */ u) => `${u.arm}/${u.cell}/${u.mode}`;

// Peer sanity: each must answer its cell with the mock's answer (translated where the cell
// translates), or it is reported as not run.
for (const name of Object.keys(peerArms)) {
  const cell = homeCell(name);
  const t = targetFor(name, cell, false);
  const conn = new Connection(/** @type {{ port: number }} */ (arms[name]).port);
  const result = await exchange(conn, t.request, { keepBody: true });
  conn.close();
  const problem = result.error?.message ?? (result.status !== 200 ? `HTTP ${result.status}: ${result.body?.slice(0, 200)}` : checkAnswer(result.body, t));
  if (problem) {
    peerStatus[name] = `not run: ${peerStatus[name]} failed the check request (${problem})`;
    delete arms[name];
    for (let i = units.length - 1; i >= 0; i--) if (units[i]?.arm === name) units.splice(i, 1);
  }
}

/** @type {Record<string, string>} */
const failures = {};

/**
 * One JSON unit: latency at concurrency 1 and 16, an open-loop run at a fixed rate, then the max
 * request rate at concurrency 64 with the CPU time the arm's process spent on it.
 * @param {{ arm: string, cell: string }} unit
 */
async function measureJson({ arm, cell }) {
  await mockConfig({ ttfbMs: 0, words: 40 });
  const t = targetFor(arm, cell, false);
  const { port, pid } = /** @type {{ port: number, pid: number }} */ (arms[arm]);
  const warm = await closedLoop({ port, request: t.request, concurrency: 16, durationMs: opts.warmupMs, keepSample: true });
  const problem = warm.firstError ?? checkAnswer(warm.sample, t);
  if (problem) throw new Error(problem);
  const c1 = await closedLoop({ port, request: t.request, concurrency: 1, durationMs: opts.windowMs });
  const c16 = await closedLoop({ port, request: t.request, concurrency: 16, durationMs: opts.windowMs });
  const open = await openLoop({ port, request: t.request, rate: opts.openLoopRate, durationMs: opts.windowMs });
  const max = await withCpu({ arm: pid, mock: mock.pid, self: process.pid }, () =>
    closedLoop({ port, request: t.request, concurrency: 64, durationMs: opts.windowMs }),
  );
  const errors = c1.errors + c16.errors + open.errors + max.result.errors + c1.non2xx + c16.non2xx + max.result.non2xx;
  const lat1 = summarize(c1.latencies);
  const lat16 = summarize(c16.latencies);
  const latOpen = summarize(open.latencies);
  return {
    rps: max.result.rps,
    cpuUsPerReq: (max.cpu.arm ?? NaN) / max.result.requests,
    armCoreBusy: arm === 'direct' ? NaN : (max.cpu.arm ?? NaN) / (max.elapsedMs * 1000),
    loadCoreBusy: ((max.cpu.self ?? 0) + (arm === 'direct' ? 0 : (max.cpu.mock ?? 0))) / (max.elapsedMs * 1000),
    c1p50: lat1.p50,
    c1p99: lat1.p99,
    c16p50: lat16.p50,
    c16p99: lat16.p99,
    openP50: latOpen.p50,
    openP99: latOpen.p99,
    errors,
  };
}

/** @type {Map<string, number>} */
const expectedFrames = new Map();

/**
 * Frames of a complete stream for this arm and mock setting, from one stream sent alone; also
 * checks the answer (sentinel) and its terminal event.
 * @param {string} arm @param {string} cell @param {number} chunks
 */
async function calibrate(arm, cell, chunks) {
  const key = `${arm}/${cell}/${chunks}`;
  const known = expectedFrames.get(key);
  if (known !== undefined) return known;
  const t = targetFor(arm, cell, true);
  const { port } = /** @type {{ port: number }} */ (arms[arm]);
  const conn = new Connection(port);
  const tracker = new StreamTracker(performance.now(), t.terminal);
  const result = await exchange(conn, t.request, { keepBody: true, onBody: (chunk) => tracker.onBody(chunk) });
  conn.close();
  if (result.error || result.status !== 200)
    throw new Error(`calibration stream: ${result.error?.message ?? `HTTP ${result.status} ${result.body?.slice(0, 200)}`}`);
  const problem = checkAnswer(result.body, t) ?? (tracker.terminalSeen ? undefined : `stream ends without ${t.terminal}`);
  if (problem) throw new Error(problem);
  // A guardrail arm holds text back and releases it in fewer, larger deltas.
  if (tracker.frames < chunks && !Object.hasOwn(GUARDRAIL_ARMS, arm)) throw new Error(`calibration stream has ${tracker.frames} frames for ${chunks} chunks`);
  expectedFrames.set(key, tracker.frames);
  return tracker.frames;
}

/**
 * One stream unit: paced streams (time to first chunk, gaps between chunks), then burst streams
 * (chunks per second and CPU per upstream chunk).
 * @param {{ arm: string, cell: string }} unit
 */
async function measureStream({ arm, cell }) {
  const t = targetFor(arm, cell, true);
  const { port, pid } = /** @type {{ port: number, pid: number }} */ (arms[arm]);
  // Time to first chunk, one stream at a time (2 chunks, 20 ms apart: the first stands alone).
  await mockConfig({ chunks: 2, intervalMs: opts.intervalMs, ttfbMs: 0 });
  const soloFrames = await calibrate(arm, cell, 2);
  const solo = await streamLoop({
    port,
    request: t.request,
    concurrency: 1,
    durationMs: opts.windowMs,
    check: { terminal: t.terminal, expectedFrames: soloFrames },
    keepGaps: false,
  });

  await mockConfig({ chunks: opts.pacedChunks, intervalMs: opts.intervalMs, ttfbMs: 0 });
  const pacedFrames = await calibrate(arm, cell, opts.pacedChunks);
  await streamLoop({
    port,
    request: t.request,
    concurrency: opts.pacedConcurrency,
    durationMs: opts.warmupMs,
    check: { terminal: t.terminal, expectedFrames: pacedFrames },
    keepGaps: false,
  });
  const paced = await streamLoop({
    port,
    request: t.request,
    concurrency: opts.pacedConcurrency,
    durationMs: opts.windowMs,
    check: { terminal: t.terminal, expectedFrames: pacedFrames },
  });

  await mockConfig({ chunks: opts.burstChunks, intervalMs: 0, ttfbMs: 0 });
  const burstFrames = await calibrate(arm, cell, opts.burstChunks);
  const burst = await withCpu({ arm: pid, mock: mock.pid, self: process.pid }, () =>
    streamLoop({
      port,
      request: t.request,
      concurrency: opts.burstConcurrency,
      durationMs: opts.windowMs,
      check: { terminal: t.terminal, expectedFrames: burstFrames },
      keepGaps: false,
    }),
  );
  const chunks = burst.result.streams * opts.burstChunks;
  const ttfc1 = summarize(solo.ttfc);
  const ttfc = summarize(paced.ttfc);
  const gaps = summarize(paced.gaps);
  return {
    ttfcP50: ttfc1.p50,
    ttfcP99: ttfc1.p99,
    loadedTtfcP50: ttfc.p50,
    loadedTtfcP99: ttfc.p99,
    gapP99: gaps.p99,
    gapMax: gaps.max,
    pacedLost: paced.lost,
    burstChunksPerSec: (chunks * 1000) / burst.elapsedMs,
    burstStreamsPerSec: (burst.result.streams * 1000) / burst.elapsedMs,
    cpuUsPerChunk: (burst.cpu.arm ?? NaN) / chunks,
    armCoreBusy: arm === 'direct' ? NaN : (burst.cpu.arm ?? NaN) / (burst.elapsedMs * 1000),
    loadCoreBusy: ((burst.cpu.self ?? 0) + (arm === 'direct' ? 0 : (burst.cpu.mock ?? 0))) / (burst.elapsedMs * 1000),
    burstLost: burst.result.lost,
    errors: solo.lost + paced.lost + burst.result.lost,
  };
}

// Idle RSS: once started (nothing served yet), and after a short warm-up and a second of quiet.
await sleep(1000);
/** @type {Record<string, number>} */
const startRss = {};
for (const [arm, { pid }] of Object.entries(arms)) if (arm !== 'direct') startRss[arm] = rssBytes(pid);
log('warm-up and idle memory…');
await mockConfig({ chunks: opts.pacedChunks, intervalMs: 0, ttfbMs: 0, words: 40 });
for (const arm of Object.keys(arms)) {
  if (arm === 'direct') continue;
  const cell = homeCell(arm);
  for (const stream of [false, true]) {
    const t = targetFor(arm, cell, stream);
    await closedLoop({ port: /** @type {{ port: number }} */ (arms[arm]).port, request: t.request, concurrency: 4, durationMs: 300 });
  }
}
await sleep(1000);
/** @type {Record<string, number>} */
const idleRss = {};
for (const [arm, { pid }] of Object.entries(arms)) if (arm !== 'direct') idleRss[arm] = rssBytes(pid);

/** @type {Record<string, Record<string, number>>[]} */
const rounds = [];
for (let round = 0; round < opts.rounds; round++) {
  /** @type {Record<string, Record<string, number>>} */
  const results = {};
  const order = shuffle([...units]);
  log(`round ${round + 1}/${opts.rounds}: ${order.length} units`);
  for (const unit of order) {
    const key = unitKey(unit);
    if (failures[key]) continue;
    try {
      results[key] = unit.mode === 'json' ? await measureJson(unit) : await measureStream(unit);
      const r = /** @type {Record<string, number>} */ (results[key]);
      log(
        `  ${key}: ${unit.mode === 'json' ? `${r.rps?.toFixed(0)} req/s, ${r.cpuUsPerReq?.toFixed(0)} µs CPU/req, c1 p50 ${r.c1p50?.toFixed(3)} ms` : `ttfc p50 ${r.ttfcP50?.toFixed(3)} ms, gap p99 ${r.gapP99?.toFixed(2)} ms, ${r.burstChunksPerSec?.toFixed(0)} chunks/s, ${r.cpuUsPerChunk?.toFixed(2)} µs CPU/chunk`}${r.errors ? `, ${r.errors} errors` : ''}`,
      );
    } catch (error) {
      failures[key] =
        `${isPeer(unit.arm) ? `the peer ${peerSpecs[/** @type {PeerName} */ (unit.arm)].title} failed it: ` : ''}${String(/** @type {Error} */ (error).message)}`;
      log(`  ${key}: FAILED ${failures[key]}`);
    }
  }
  rounds.push(results);
}

// Added latency: each arm minus the direct arm on the same upstream protocol, in the same round.
/** @type {Record<string, Record<string, number>>[]} */
const addedRounds = rounds.map((results) => {
  /** @type {Record<string, Record<string, number>>} */
  const added = {};
  for (const [key, metrics] of Object.entries(results)) {
    const [arm, cell, mode] = key.split('/');
    if (arm === 'direct') continue;
    const base = results[`direct/${upstreamCell(/** @type {string} */ (cell))}/${mode}`];
    if (!base) continue;
    // A metric one of the two lacks gives NaN, as the subtraction of undefined did.
    const minus = (/** @type {string} */ name) => (metrics[name] ?? NaN) - (base[name] ?? NaN);
    added[key] =
      mode === 'json'
        ? {
            c1p50: minus('c1p50'),
            c1p99: minus('c1p99'),
            c16p50: minus('c16p50'),
            c16p99: minus('c16p99'),
            openP50: minus('openP50'),
            openP99: minus('openP99'),
          }
        : {
            ttfcP50: minus('ttfcP50'),
            ttfcP99: minus('ttfcP99'),
            loadedTtfcP50: minus('loadedTtfcP50'),
            loadedTtfcP99: minus('loadedTtfcP99'),
            gapP99: minus('gapP99'),
          };
  }
  return added;
});

/** Median and spread across rounds of every metric. @param {Record<string, Record<string, number>>[]} perRound */
function summarizeRounds(perRound) {
  /** @type {Record<string, Record<string, ReturnType<typeof acrossRounds>>>} */
  const out = {};
  const keys = new Set(perRound.flatMap((r) => Object.keys(r)));
  for (const key of keys) {
    const metrics = new Set(perRound.flatMap((r) => Object.keys(r[key] ?? {})));
    out[key] = {};
    for (const metric of metrics) out[key][metric] = acrossRounds(perRound.map((r) => r[key]?.[metric] ?? NaN));
  }
  return out;
}
const summary = summarizeRounds(rounds);
const added = summarizeRounds(addedRounds);

/** Per-round ratio of two unit metrics, summarized. @param {string} a @param {string} b @param {string} metric */
function ratio(a, b, metric) {
  return acrossRounds(rounds.map((r) => (r[a]?.[metric] ?? NaN) / (r[b]?.[metric] ?? NaN)));
}

// ---------------------------------------------------------------------------------------------
// Capacity: paced streams (50 chunks/s) held with no lost chunk, and memory per stream.

/** @type {Record<string, { steps: Record<string, unknown>[], maxHeld: number, maxOnTime: number, rssPerStreamAt1000?: number }>} */
const capacity = {};
if (opts.capacity) {
  const capArms = shuffle([
    { arm: 'direct', cell: 'chat-pass' },
    { arm: 'floor', cell: 'chat-pass' },
    { arm: 'infergate', cell: 'chat-pass' },
    ...(opts.cells.includes('messages-to-chat') ? [{ arm: 'infergate', cell: 'messages-to-chat' }] : []),
    ...Object.keys(peerArms)
      .filter((name) => arms[name])
      .map((name) => ({ arm: name, cell: homeCell(name) })),
  ]);
  await mockConfig({ chunks: opts.capacityChunks, intervalMs: opts.intervalMs, ttfbMs: 0 });
  for (const { arm, cell } of capArms) {
    const key = `${arm}/${cell}`;
    if (failures[`${arm}/${cell}/stream`]) continue;
    const t = targetFor(arm, cell, true);
    const { port, pid } = /** @type {{ port: number, pid: number }} */ (arms[arm]);
    let frames;
    try {
      frames = await calibrate(arm, cell, opts.capacityChunks);
    } catch (error) {
      failures[`capacity/${key}`] = String(/** @type {Error} */ (error).message);
      continue;
    }
    capacity[key] = { steps: [], maxHeld: 0, maxOnTime: 0 };
    for (const count of opts.capacitySteps) {
      await sleep(500);
      const rssBefore = rssBytes(pid);
      const rampMs = Math.min(2000, count);
      const held = await holdStreams({
        port,
        request: t.request,
        count,
        rampMs,
        check: { terminal: t.terminal, expectedFrames: frames },
        // Memory on the plateau: every stream open, before the first ones end; the peak of a few samples.
        during: async () => {
          let peak = 0;
          for (let i = 0; i < 6; i++) {
            await sleep(150);
            peak = Math.max(peak, rssBytes(pid));
          }
          return peak;
        },
      });
      const gaps = summarize(held.gaps);
      const rssPeak = /** @type {number} */ (held.during);
      const noLoss = held.lost === 0;
      const onTime = noLoss && gaps.p99 <= 2 * opts.intervalMs;
      const step = {
        count,
        lost: held.lost,
        gapP99: gaps.p99,
        gapMax: gaps.max,
        rssBefore,
        rssPeak,
        rssPerStream: arm === 'direct' ? NaN : (rssPeak - rssBefore) / count,
        held: noLoss,
        onTime,
        firstError: held.firstError,
      };
      capacity[key].steps.push(step);
      log(
        `  capacity ${key} ${count} streams: ${noLoss ? 'no chunk lost' : `${held.lost} streams lost chunks`}, gap p99 ${gaps.p99.toFixed(1)} ms${onTime ? '' : ' (late)'}, max ${gaps.max.toFixed(1)} ms${arm === 'direct' ? '' : `, ${(step.rssPerStream / 1024).toFixed(1)} KB RSS/stream`}`,
      );
      if (count === 1000) capacity[key].rssPerStreamAt1000 = step.rssPerStream;
      if (noLoss) capacity[key].maxHeld = count;
      if (onTime) capacity[key].maxOnTime = count;
      // Past a loss, or far behind the pace, bigger steps say nothing more.
      if (!noLoss || gaps.p99 > 5 * opts.intervalMs) break;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Event-loop stall while big image requests pass during paced streams (infergate only: it reports
// its own event-loop delay; every arm's worst stream gap is recorded too).

/** @type {Record<string, unknown>[]} */
const imageRuns = [];
if (opts.image) {
  const imageCells = ['chat-pass', ...(opts.cells.includes('messages-to-chat') ? ['messages-to-chat'] : [])];
  const images = opts.imageSizes.map((size) => ({ size, base64: imageBase64(size) }));
  const streamChunks = 250; // 5 s at 20 ms
  for (const cell of imageCells) {
    await mockConfig({ chunks: streamChunks, intervalMs: opts.intervalMs, ttfbMs: 0, words: 40 });
    const t = targetFor('infergate', cell, true);
    let frames;
    try {
      frames = await calibrate('infergate', cell, streamChunks);
    } catch (error) {
      failures[`image/${cell}`] = String(/** @type {Error} */ (error).message);
      continue;
    }
    /** @type {Record<string, unknown>[]} */
    const perImage = [];
    const held = await holdStreams({
      port: gateway.port,
      request: t.request,
      count: opts.imageStreams,
      rampMs: 500,
      check: { terminal: t.terminal, expectedFrames: frames },
      during: async () => {
        await sleep(500);
        for (const image of images) {
          const request = targetFor('infergate', cell, false, image.base64).request;
          const conn = new Connection(gateway.port);
          await gateway.ipc('eldStart');
          const started = performance.now();
          const result = await exchange(conn, request, { keepBody: true });
          const latencyMs = performance.now() - started;
          const eld = await gateway.ipc('eldRead');
          conn.close();
          perImage.push({
            cell,
            imageBytes: image.size,
            bodyBytes: request.length,
            status: result.status,
            latencyMs,
            eldMaxMs: eld?.maxMs,
            eldP99Ms: eld?.p99Ms,
            error: result.status === 200 ? undefined : (result.error?.message ?? result.body?.slice(0, 200)),
          });
          await sleep(300);
        }
      },
    });
    for (const run of perImage) imageRuns.push({ ...run, streams: opts.imageStreams, streamsLost: held.lost, streamGapMaxMs: held.maxGap });
    for (const run of perImage)
      log(
        `  image ${cell} ${(Number(run.imageBytes) / 2 ** 20).toFixed(0)} MB: HTTP ${run.status}, ${Number(run.latencyMs).toFixed(0)} ms, event-loop max ${Number(run.eldMaxMs).toFixed(1)} ms; streams lost ${held.lost}, worst gap ${held.maxGap.toFixed(1)} ms`,
      );
  }
}

// ---------------------------------------------------------------------------------------------
// Wrap up

// RSS right after the last phase holds garbage not collected yet (the last 20 MB image among
// it); after a few idle seconds it shows what the process keeps. Both are reported.
/** @type {Record<string, number>} */
const endRssAtOnce = {};
for (const [arm, { pid }] of Object.entries(arms)) if (arm !== 'direct') endRssAtOnce[arm] = rssBytes(pid);
await sleep(opts.quick ? 2000 : 8000);
/** @type {Record<string, number>} */
const endRss = {};
for (const [arm, { pid }] of Object.entries(arms)) if (arm !== 'direct') endRss[arm] = rssBytes(pid);
const mockStats = await mock.ipc('stats');
for (const proc of [gateway, floor]) await proc.ipc('shutdown').catch(() => undefined);
await mock.ipc('shutdown').catch(() => undefined);
await sleep(opts.profile ? 1500 : 200);
stopAll();
for (const cleanup of peerCleanups) cleanup();
meta.loadavgEnd = os.loadavg();

// Validity: the mock and load generator must have room to spare.
const bestGatewayRps = Math.max(
  ...opts.cells.map((c) => summary[`infergate/${c}/json`]?.rps?.median ?? 0),
  ...peerNames.map((name) => summary[`${name}/${homeCell(name)}/json`]?.rps?.median ?? 0),
);
const directRps = summary['direct/chat-pass/json']?.rps?.median ?? NaN;
const headroom = directRps / bestGatewayRps;
const validity = {
  headroom: { directRps, bestGatewayRps, ratio: headroom, valid: headroom >= 2 },
  valid: headroom >= 2,
  notes: /** @type {string[]} */ ([]),
};
if (!(headroom >= 2))
  validity.notes.push(
    `INVALID: the direct arm (${directRps.toFixed(0)} req/s) is not 2× the best gateway arm (${bestGatewayRps.toFixed(0)} req/s): the mock or load generator limits the run`,
  );
const gwBusy = summary['infergate/chat-pass/json']?.armCoreBusy?.median;
if (gwBusy !== undefined && gwBusy < 0.9)
  validity.notes.push(`the gateway core was ${(gwBusy * 100).toFixed(0)}% busy at max load on chat-pass: the load side, not the gateway, may set the max RPS`);
if (!pinned) validity.notes.push('processes were not pinned to cores (no taskset or fewer than 2 cores)');
if (Math.max(...meta.loadavgStart) > 0.5 * cores)
  validity.notes.push(
    `the machine was busy at the start (load average ${meta.loadavgStart.map((l) => l.toFixed(2)).join(' ')} on ${cores} cores): numbers are noisy`,
  );
if (opts.quick) validity.notes.push('quick mode: short windows, one round; a smoke run, not a measurement');

const pass = (/** @type {number} */ v, /** @type {'>=' | '<=' | '>' | '<'} */ op, /** @type {number} */ limit) =>
  Number.isFinite(v) ? { '>=': v >= limit, '<=': v <= limit, '>': v > limit, '<': v < limit }[op] : undefined;
/** The 20 MB image's run on a cell, if the image phase ran it. @param {string} cell */
const image20 = (cell) => /** @type {{ eldMaxMs?: number } | undefined} */ (imageRuns.find((r) => r.cell === cell && r.imageBytes === 20 * 1024 * 1024));
const translatedCells = opts.cells.filter((cell) => !cells[cell]?.passthrough);
/** Infergate over the floor proxying the cell's upstream protocol. @param {string} cell @param {'stream' | 'json'} mode @param {string} metric */
const overFloor = (cell, mode, metric) => ratio(`infergate/${cell}/${mode}`, `floor/${upstreamCell(cell)}/${mode}`, metric);
/** Added time to first chunk (arm − direct, same round) of infergate minus the floor's, p50 medians. @param {string} cell */
const ttfcOverFloor = (cell) =>
  (added[`infergate/${cell}/stream`]?.ttfcP50?.median ?? NaN) - (added[`floor/${upstreamCell(cell)}/stream`]?.ttfcP50?.median ?? NaN);
const t = {
  peer: ratio('infergate/chat-pass/json', 'peer/chat-pass/json', 'rps'),
  ccrRps: ratio('infergate/messages-to-chat/json', 'ccr/messages-to-chat/json', 'rps'),
  ccrChunk: ratio('infergate/messages-to-chat/stream', 'ccr/messages-to-chat/stream', 'cpuUsPerChunk'),
};
/** A median of the run summary, for the notes of a target. @param {string} key @param {string} metric @param {number} digits */
const noted = (key, metric, digits) => {
  const v = summary[key]?.[metric]?.median;
  return v === undefined || !Number.isFinite(v) ? '–' : v.toLocaleString('en-US', { maximumFractionDigits: digits });
};
/** A "… / floor" target row. @param {string} metric @param {string} cell @param {'stream' | 'json'} mode @param {string} field @param {'>=' | '<='} op @param {number} limit */
const floorRow = (metric, cell, mode, field, op, limit) => {
  const r = overFloor(cell, mode, field);
  return {
    metric,
    target: `${op === '>=' ? '≥' : '≤'} ${limit.toFixed(1)}`,
    value: r.median,
    spread: r,
    pass: pass(r.median, op, limit),
    unit: '×',
    note: `${noted(`infergate/${cell}/${mode}`, field, 2)} vs ${noted(`floor/${upstreamCell(cell)}/${mode}`, field, 2)}`,
  };
};
const endOverIdle = (endRss.infergate ?? NaN) / (idleRss.infergate ?? NaN);
// Issue 14's targets: ratios against the floor in the same run.
const targets = [
  floorRow('CPU per upstream chunk, chat passthrough / floor', 'chat-pass', 'stream', 'cpuUsPerChunk', '<=', 1.3),
  ...translatedCells.map((cell) => floorRow(`CPU per upstream chunk, ${cells[cell]?.label} / floor`, cell, 'stream', 'cpuUsPerChunk', '<=', 2.0)),
  ...['chat-pass', ...translatedCells.slice(0, 1)].map((cell) => ({
    metric: `added time to first chunk p50 over the floor's, ${cells[cell]?.label} (one stream at a time)`,
    target: '≤ +0.3 ms',
    value: ttfcOverFloor(cell),
    pass: pass(ttfcOverFloor(cell), '<=', 0.3),
    unit: 'ms',
    note: `infergate adds ${added[`infergate/${cell}/stream`]?.ttfcP50?.median?.toFixed(3) ?? '–'} ms to the direct arm, the floor ${added[`floor/${upstreamCell(cell)}/stream`]?.ttfcP50?.median?.toFixed(3) ?? '–'} ms`,
  })),
  ...['infergate/chat-pass', 'infergate/messages-to-chat'].map((key) => ({
    metric: `paced streams (50 chunks/s) held with zero lost chunks, ${cells[key.split('/')[1] ?? '']?.label}`,
    target: '≥ 1,500',
    value: capacity[key]?.maxHeld ?? NaN,
    pass: opts.capacity ? pass(capacity[key]?.maxHeld ?? NaN, '>=', 1500) : undefined,
    unit: 'streams',
    note: opts.capacity
      ? `steps: ${opts.capacitySteps.join(', ')}; on time (gap p99 ≤ ${2 * opts.intervalMs} ms) up to ${capacity[key]?.maxOnTime ?? 0}; floor ${capacity['floor/chat-pass']?.maxHeld ?? '–'}`
      : 'not run',
  })),
  floorRow('JSON RPS, chat passthrough / floor', 'chat-pass', 'json', 'rps', '>=', 0.9),
  ...translatedCells.slice(0, 1).map((cell) => floorRow(`JSON RPS, ${cells[cell]?.label} / floor`, cell, 'json', 'rps', '>=', 0.8)),
  {
    metric: 'JSON RPS vs the peer gateway (portkey), chat passthrough, same run',
    target: '≥ 5×',
    value: t.peer.median,
    spread: t.peer,
    pass: pass(t.peer.median, '>=', 5),
    unit: '×',
    note: peerStatus.peer,
  },
  {
    metric: 'JSON RPS vs the second peer (claude-code-router), Anthropic client → chat upstream, same run',
    target: '> 1× (ahead)',
    value: t.ccrRps.median,
    spread: t.ccrRps,
    pass: pass(t.ccrRps.median, '>', 1),
    unit: '×',
    note: arms.ccr
      ? `${peerStatus.ccr}: ${noted('ccr/messages-to-chat/json', 'rps', 0)} req/s, ${noted('ccr/messages-to-chat/json', 'cpuUsPerReq', 0)} µs CPU/req; infergate ${noted('infergate/messages-to-chat/json', 'rps', 0)} req/s, ${noted('infergate/messages-to-chat/json', 'cpuUsPerReq', 0)} µs`
      : peerStatus.ccr,
  },
  {
    metric: 'CPU per streamed chunk vs the second peer (claude-code-router), Anthropic client → chat upstream',
    target: '< 1× (ahead)',
    value: t.ccrChunk.median,
    spread: t.ccrChunk,
    pass: pass(t.ccrChunk.median, '<', 1),
    unit: '×',
    note: arms.ccr
      ? `infergate ${noted('infergate/messages-to-chat/stream', 'cpuUsPerChunk', 2)} vs ${noted('ccr/messages-to-chat/stream', 'cpuUsPerChunk', 2)} µs`
      : peerStatus.ccr,
  },
  ...['chat-pass', 'messages-to-chat'].map((cell) => ({
    metric: `event-loop stall from a 20 MB image, ${cells[cell]?.label}`,
    target: '≤ 50 ms',
    value: image20(cell)?.eldMaxMs ?? NaN,
    pass: opts.image ? pass(image20(cell)?.eldMaxMs ?? NaN, '<=', 50) : undefined,
    unit: 'ms',
  })),
  {
    metric: 'RSS at the end of the run / idle RSS after the warm-up',
    target: '≤ 1.3',
    value: endOverIdle,
    pass: pass(endOverIdle, '<=', 1.3),
    unit: '×',
    note: `end ${((endRss.infergate ?? NaN) / 2 ** 20).toFixed(1)} MB after ${opts.quick ? 2 : 8} s idle (${((endRssAtOnce.infergate ?? NaN) / 2 ** 20).toFixed(1)} MB right after the last phase; floor ${((endRss.floor ?? NaN) / 2 ** 20).toFixed(1)} MB), idle after warm-up ${((idleRss.infergate ?? NaN) / 2 ** 20).toFixed(1)} MB, at start ${((startRss.infergate ?? NaN) / 2 ** 20).toFixed(1)} MB`,
  },
];

const result = {
  // `peer` (Portkey) as earlier reports had it; `peers` names every peer arm.
  meta: { ...meta, peer: peerStatus.peer, peers: Object.fromEntries(peerNames.map((name) => [peerSpecs[name].title, peerStatus[name]])) },
  validity,
  targets,
  summary,
  added,
  rounds,
  addedRounds,
  capacity,
  image: imageRuns,
  startRss,
  idleRss,
  endRss,
  endRssAtOnce,
  failures,
  mock: mockStats,
  expectedFrames: Object.fromEntries(expectedFrames),
};
mkdirSync(opts.out, { recursive: true });
const stamp = meta.date.replace(/[:.]/g, '-').slice(0, 19);
const markdown = renderMarkdown(result);
const chart = renderChart(result);
for (const name of [`bench-${stamp}`, 'latest']) {
  writeFileSync(
    join(opts.out, `${name}.json`),
    JSON.stringify(result, (_, v) => (typeof v === 'number' && !Number.isFinite(v) ? null : v), 2),
  );
  writeFileSync(join(opts.out, `${name}.md`), markdown);
  writeFileSync(join(opts.out, `${name}.svg`), chart);
}
console.log(markdown);
log(`results: ${join(opts.out, 'latest.json')}, latest.md and latest.svg${opts.profile ? `; CPU profile of the gateway in ${profileDir}` : ''}`);
clearTimeout(watchdog);
process.exit(0);
