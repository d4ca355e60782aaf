#!/usr/bin/env node
// What the request log costs and holds: `npm run bench:request-log` (builds first). See
// "Request log" in docs/benchmark.md.
//
//   node bench/request-log.mjs [--sink postgres|memory] [--content] [--rounds N] [--window MS] [--sink-seconds S]
//   node bench/request-log.mjs --soak SECONDS [--rate N]
//
// Default run, two parts:
// (a) The gateway with the request log on vs off, paired: two gateway processes (bench/gateway-server.mjs,
//     one with --request-log) on core 1, loaded one at a time in interleaved rounds, the mock upstream and
//     this runner on core 0; Chat passthrough JSON (closed loop, 16 connections: req/s and CPU µs per
//     request) and streams of 20 chunks (16 connections: CPU µs per chunk).
// (b) The Postgres sink alone, fed rows in this process as fast as it takes them (`overflow: 'wait'`, its
//     default batch size, flush interval and queue): rows/s written; then, with `overflow: 'drop'`, offered
//     rates from half to three times that, 10 s each: where drops start, and how long the queue lasts.
// --soak S: the standalone server (dist/cli.js, a config file with the request log on Postgres) under a
//     steady load for S seconds, its RSS sampled every 10 s; at the end every answered request must have its
//     row in Postgres, exactly once (exit 1 otherwise).
//
// POSTGRES_URL names the server (else one is started with .ci/postgres); each run uses a schema of its own,
// dropped at the end.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { children, GATEWAY_CORE, LOAD_CORE, nodeCommand, pinSelf, startChild, stopAll } from './lib/children.mjs';
import { freePort } from './lib/free-port.mjs';
import { Connection } from './lib/http-client.mjs';
import { closedLoop, exchange, streamLoop } from './lib/load.mjs';
import { BENCH_KEY, target } from './lib/payloads.mjs';
import { benchDatabase } from './lib/postgres-server.mjs';
import { cpuMicros, rssBytes, withCpu } from './lib/proc.mjs';
import { openRequestLog } from './lib/request-log-sink.mjs';
import { acrossRounds, shuffle } from './lib/stats.mjs';

const argv = process.argv.slice(2);
const value = (/** @type {string} */ name, /** @type {string} */ fallback) => {
  const i = argv.indexOf(name);
  return i >= 0 && argv[i + 1] !== undefined ? /** @type {string} */ (argv[i + 1]) : fallback;
};
if (argv.includes('--help') || argv.includes('-h')) {
  console.log(`node bench/request-log.mjs [options]   (npm run bench:request-log -- [options] builds dist/ first)
  --sink K           postgres (default) or memory (MemoryRequestLog: checks the harness without a database)
  --content          the 'on' gateway also keeps prompts and answers (captureContent)
  --rounds N         interleaved rounds of the paired gateways (default 5)
  --window MS        measurement window of each arm in a round (default 4000)
  --sink-seconds S   how long the sink is fed at full speed (default 10)
  --soak S           instead: the soak, S seconds of steady load with the request log on
  --rate N           the soak's requests per second (default 100)`);
  process.exit(0);
}
const opts = {
  sink: /** @type {'postgres' | 'memory'} */ (value('--sink', 'postgres')),
  content: argv.includes('--content'),
  rounds: Number(value('--rounds', '5')),
  windowMs: Number(value('--window', '4000')),
  sinkSeconds: Number(value('--sink-seconds', '10')),
  soakSeconds: Number(value('--soak', '0')),
  rate: Number(value('--rate', '100')),
};
if (opts.sink !== 'postgres' && opts.sink !== 'memory') throw new Error('--sink must be postgres or memory');

const CHUNKS = 20;
const CONCURRENCY = 16;
const SAMPLE_EVERY_MS = 10_000;

pinSelf();
const database = opts.sink === 'postgres' ? await benchDatabase() : undefined;
const mock = await startChild('mock', new URL('./mock-upstream.mjs', import.meta.url).pathname, [], LOAD_CORE);
await mock.ipc('config', { chunks: CHUNKS, intervalMs: 0, ttfbMs: 0 });
const mockOrigin = `http://127.0.0.1:${mock.port}`;
const gatewayScript = new URL('./gateway-server.mjs', import.meta.url).pathname;
const logEnv = { ...process.env, REQUEST_LOG_URL: database?.url ?? '', REQUEST_LOG_SCHEMA: database?.schema ?? '' };

let failed = false;
try {
  console.log(`machine: ${os.cpus()[0]?.model}, ${os.cpus().length} cores; node ${process.version}; load average ${loadAverage()}`);
  console.log(`sink: ${opts.sink}${database ? ` (${database.started ? 'started here' : 'POSTGRES_URL'}, schema ${database.schema})` : ''}`);
  if (opts.soakSeconds > 0) failed = !(await soak());
  else {
    await paired();
    if (database) await sinkAlone();
  }
  console.log(`\nload average at the end: ${loadAverage()}`);
} finally {
  stopAll();
  await database?.close();
}
process.exit(failed ? 1 : 0);

// ---------------------------------------------------------------------------------------------
// (a) the gateway, request log off vs on

async function paired() {
  const arms = {
    off: await startChild('gateway-off', gatewayScript, [mockOrigin], GATEWAY_CORE),
    on: await startChild('gateway-on', gatewayScript, [mockOrigin, '--request-log', opts.sink, ...(opts.content ? ['--capture-content'] : [])], GATEWAY_CORE, {
      env: logEnv,
    }),
  };
  /** @type {Record<'off' | 'on', { rps: number[], cpuPerRequest: number[], cpuPerChunk: number[], chunksPerSec: number[] }>} */
  const results = {
    off: { rps: [], cpuPerRequest: [], cpuPerChunk: [], chunksPerSec: [] },
    on: { rps: [], cpuPerRequest: [], cpuPerChunk: [], chunksPerSec: [] },
  };
  let answered = 0;
  let problems = 0;
  for (let round = -1; round < opts.rounds; round++) {
    // Round -1 warms both up (JIT, connection pools, the log's table) and is not counted.
    for (const arm of shuffle(/** @type {('off' | 'on')[]} */ (['off', 'on']))) {
      const { port, pid } = arms[arm];
      const json = target({ arm: 'infergate', cell: 'chat-pass', stream: false, port, mockOrigin });
      const stream = target({ arm: 'infergate', cell: 'chat-pass', stream: true, port, mockOrigin });
      const windowMs = round < 0 ? 1000 : opts.windowMs;
      const jsonRun = await withCpu({ arm: pid }, () =>
        thenFlushed(arm === 'on' ? arms.on : undefined, () => closedLoop({ port, request: json.request, concurrency: CONCURRENCY, durationMs: windowMs })),
      );
      const streamRun = await withCpu({ arm: pid }, () =>
        thenFlushed(arm === 'on' ? arms.on : undefined, () =>
          streamLoop({ port, request: stream.request, concurrency: CONCURRENCY, durationMs: windowMs, check: { terminal: stream.terminal }, keepGaps: false }),
        ),
      );
      problems += jsonRun.result.errors + jsonRun.result.non2xx + streamRun.result.lost;
      if (arm === 'on') answered += jsonRun.result.requests + streamRun.result.streams - streamRun.result.lost;
      if (round < 0) continue;
      results[arm].rps.push(jsonRun.result.rps);
      results[arm].cpuPerRequest.push((jsonRun.cpu.arm ?? NaN) / jsonRun.result.requests);
      const chunks = streamRun.result.streams * CHUNKS;
      results[arm].cpuPerChunk.push((streamRun.cpu.arm ?? NaN) / chunks);
      results[arm].chunksPerSec.push((chunks * 1000) / streamRun.elapsedMs);
    }
  }
  const sink = await arms.on.ipc('requestLog', undefined);
  const median = (/** @type {'off' | 'on'} */ arm, /** @type {'rps' | 'cpuPerRequest' | 'cpuPerChunk' | 'chunksPerSec'} */ metric) =>
    acrossRounds(results[arm][metric]);
  const line = (/** @type {string} */ label, /** @type {'rps' | 'cpuPerRequest' | 'cpuPerChunk' | 'chunksPerSec'} */ metric, digits = 1) => {
    const off = median('off', metric);
    const on = median('on', metric);
    const change = ((on.median - off.median) / off.median) * 100;
    console.log(
      `  ${label.padEnd(34)} off ${off.median.toFixed(digits).padStart(9)} (spread ${(off.spread * 100).toFixed(0)}%)   ` +
        `on ${on.median.toFixed(digits).padStart(9)} (spread ${(on.spread * 100).toFixed(0)}%)   ${change >= 0 ? '+' : ''}${change.toFixed(1)}%`,
    );
  };
  console.log(
    `\n(a) gateway, request log off vs on (${opts.sink}${opts.content ? ', with content' : ''}), chat passthrough, ${opts.rounds} rounds of ${opts.windowMs} ms, medians:`,
  );
  line('JSON req/s (16 connections)', 'rps', 0);
  line('JSON CPU µs per request', 'cpuPerRequest');
  line(`stream chunks/s (${CHUNKS}-chunk streams)`, 'chunksPerSec', 0);
  line('stream CPU µs per chunk', 'cpuPerChunk', 2);
  console.log(`  answered by the 'on' gateway: ${answered}; its sink: ${JSON.stringify(sink)}; errors/lost: ${problems}`);
  if (problems > 0 || sink.written !== answered || sink.dropped > 0) {
    console.log('  FAIL: the log did not get one row per answered request');
    failed = true;
  }
}

/**
 * `work`, then the gateway's request log flushed: the rows of a window are written inside it, so
 * that their writing counts for the arm.
 * @template T
 * @param {{ ipc: (cmd: string, args: unknown) => Promise<any> } | undefined} gateway
 * @param {() => Promise<T>} work
 * @returns {Promise<T>}
 */
async function thenFlushed(gateway, work) {
  const result = await work();
  await gateway?.ipc('requestLog', undefined);
  return result;
}

// ---------------------------------------------------------------------------------------------
// (b) the Postgres sink alone

/** A row like the gateway's, each with its own request id. @param {number} n @returns {import('infergate').RequestLogRow} */
function row(n) {
  return {
    requestId: `req_bench_${process.pid}_${n}`,
    startedAt: Date.now(),
    keyId: `key_${n % 50}`,
    keyGroup: n % 3 === 0 ? 'team-a' : 'default',
    endpoint: '/v1/chat/completions',
    kind: 'text',
    stream: n % 2 === 0,
    model: n % 4 === 0 ? 'gpt-4.1-mini' : 'claude-sonnet-4-5',
    deployment: n % 4 === 0 ? 'openai' : 'anthropic',
    provider: n % 4 === 0 ? 'openai' : 'anthropic',
    upstreamModel: n % 4 === 0 ? 'gpt-4.1-mini' : 'claude-sonnet-4-5',
    routeReason: 'p2c',
    status: n % 50 === 0 ? 'error' : 'ok',
    httpStatus: n % 50 === 0 ? 429 : 200,
    errorCode: n % 50 === 0 ? 'rate_limit_exceeded' : null,
    errorMessage: n % 50 === 0 ? 'Rate limit reached for requests' : null,
    cancelled: false,
    cached: false,
    finishReason: 'stop',
    responseId: `chatcmpl-${n}`,
    inputTokens: 1200 + (n % 300),
    outputTokens: 150 + (n % 100),
    cachedInputTokens: n % 5 === 0 ? 1024 : 0,
    cacheWriteTokens: 0,
    reasoningTokens: 0,
    costUsd: 0.0021,
    latencyMs: 800 + (n % 400),
    ttftMs: n % 2 === 0 ? 240 : null,
    overheadMs: 0.4,
    attempts: 1,
  };
}

async function sinkAlone() {
  let rowsMade = 0;
  // Sustained: back-pressure, so nothing is dropped and the writer goes as fast as the sink takes rows.
  const waiting = await openRequestLog({ kind: 'postgres', url: database?.url, schema: database?.schema, overflow: 'wait' });
  for (let i = 0; i < 2000; i++) await waiting.write(row(rowsMade++));
  await waiting.flush();
  const before = waiting.sinkStats().written;
  const started = performance.now();
  const deadline = started + opts.sinkSeconds * 1000;
  let fed = 0;
  while (performance.now() < deadline) {
    for (let i = 0; i < 100; i++) {
      const written = waiting.write(row(rowsMade++));
      if (written) await written;
      fed++;
    }
    // Now and then a turn of the event loop, so that pg's socket is read even when no write waits.
    await new Promise((resolve) => setImmediate(resolve));
  }
  await waiting.flush();
  const elapsed = (performance.now() - started) / 1000;
  const stats = waiting.sinkStats();
  const sustained = (stats.written - before) / elapsed;
  await waiting.close();
  console.log(
    `\n(b) PostgresRequestLog alone, defaults but overflow 'wait': ${fed} rows in ${elapsed.toFixed(1)} s, flushed: ${sustained.toFixed(0)} rows/s written`,
  );
  console.log(`  sink counts: ${JSON.stringify(stats)}`);

  // Overflow: the default policy (drop) and queue, offered rates around the sustained one, each for up
  // to 10 s from an empty queue: whether it drops, and how long the queue took to fill.
  const dropping = await openRequestLog({ kind: 'postgres', url: database?.url, schema: database?.schema });
  console.log('  offered rate → dropped (default overflow policy and queue; steps of 10 s, each from an empty queue):');
  let onset = NaN;
  for (const share of [0.5, 0.8, 1, 1.25, 1.5, 2, 3]) {
    const rate = Math.round((share * sustained) / 100) * 100;
    const start = dropping.sinkStats();
    const stepStarted = performance.now();
    let offered = 0;
    let firstDropMs = NaN;
    while (performance.now() - stepStarted < 10_000) {
      // Paced in 10 ms ticks: what is due by now is written, then the loop sleeps.
      const due = Math.floor(((performance.now() - stepStarted) / 1000) * rate);
      while (offered < due) {
        void dropping.write(row(rowsMade++));
        offered++;
      }
      if (Number.isNaN(firstDropMs) && dropping.sinkStats().dropped > start.dropped) firstDropMs = performance.now() - stepStarted;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await dropping.flush();
    const dropped = dropping.sinkStats().dropped - start.dropped;
    const when = Number.isNaN(firstDropMs) ? '' : `, the first after ${(firstDropMs / 1000).toFixed(1)} s`;
    console.log(
      `    ${(share * 100).toFixed(0).padStart(3)}% of it, ${String(rate).padStart(6)} rows/s: ${offered} rows, ${dropped} dropped (${((dropped / offered) * 100).toFixed(1)}%)${when}`,
    );
    if (dropped > 0 && Number.isNaN(onset)) onset = rate;
  }
  await dropping.close();
  console.log(`  drops start at: ${Number.isNaN(onset) ? 'none up to the highest rate' : `${onset} rows/s offered`}`);
}

// ---------------------------------------------------------------------------------------------
// (c) the soak

async function soak() {
  const gateway = await startStandalone();
  const port = gateway.port;
  // Mostly JSON, every fourth a stream (slowed to 20 ms between chunks, as a model writes).
  await mock.ipc('config', { chunks: CHUNKS, intervalMs: 20, ttfbMs: 0 });
  const json = target({ arm: 'infergate', cell: 'chat-pass', stream: false, port, mockOrigin });
  const stream = target({ arm: 'infergate', cell: 'chat-pass', stream: true, port, mockOrigin });
  /** @type {Set<string>} */
  const ids = new Set();
  let sent = 0;
  let failures = 0;
  const rss = [{ at: 0, bytes: rssBytes(gateway.pid) }];
  const cpuStart = cpuMicros(gateway.pid);
  const started = performance.now();
  const deadline = started + opts.soakSeconds * 1000;
  const sampler = setInterval(() => {
    const at = Math.round((performance.now() - started) / 1000);
    const bytes = rssBytes(gateway.pid);
    rss.push({ at, bytes });
    console.log(`  ${String(at).padStart(4)} s: ${sent} sent, RSS ${mib(bytes)} MiB`);
  }, SAMPLE_EVERY_MS);
  console.log(`\n(c) soak: the standalone server, ${opts.soakSeconds} s at ${opts.rate} req/s (a stream every 4th), request log on ${opts.sink}`);
  // Workers each paced to their share of the rate (one request a second each, so that a slow stream
  // does not hold the others back): a steady load, not a burst.
  const workers = Math.max(16, Math.ceil(opts.rate));
  const gapMs = (1000 * workers) / opts.rate;
  await Promise.all(
    Array.from({ length: workers }, async (_, worker) => {
      const conn = new Connection(port);
      let next = started + (worker * gapMs) / workers;
      for (let n = worker; ; n += workers) {
        const wait = next - performance.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        if (performance.now() >= deadline) break;
        next += gapMs;
        /** @type {string | undefined} */
        let id;
        sent++;
        const result = await exchange(conn, n % 4 === 3 ? stream.request : json.request, {
          onHead: (_status, headers) => void (id = headers['x-request-id']),
        });
        if (result.error || result.status !== 200 || id === undefined) failures++;
        else ids.add(id);
      }
      conn.close();
    }),
  );
  clearInterval(sampler);
  const elapsed = (performance.now() - started) / 1000;
  const cpu = cpuMicros(gateway.pid) - cpuStart;
  rss.push({ at: Math.round(elapsed), bytes: rssBytes(gateway.pid) });
  const sink = await drained(gateway, sent);
  const rows = await storedRows(sink?.written ?? 0);
  const missing = rows.ids ? [...ids].filter((id) => !rows.ids?.has(id)).length : 0;
  const extra = rows.ids ? [...rows.ids].filter((id) => !ids.has(id)).length : 0;
  const max = Math.max(...rss.map((sample) => sample.bytes));
  console.log(`  ${sent} requests sent in ${elapsed.toFixed(0)} s (${(sent / elapsed).toFixed(1)} req/s), ${failures} failed, ${ids.size} answered with an id`);
  console.log(`  gateway CPU: ${(cpu / 1e6).toFixed(1)} s (${((cpu / 1e4 / elapsed) * 1).toFixed(1)}% of a core)`);
  console.log(`  RSS: first ${mib(rss[0]?.bytes ?? NaN)} MiB, last ${mib(rss.at(-1)?.bytes ?? NaN)} MiB, max ${mib(max)} MiB (${rss.length} samples)`);
  console.log(`  sink: ${JSON.stringify(sink)}`);
  console.log(
    rows.ids
      ? `  rows in Postgres: ${rows.count} (${rows.ids.size} distinct request ids); missing ${missing}, unexpected ${extra}`
      : `  rows written to memory: ${rows.count} (ids not compared)`,
  );
  const exact = failures === 0 && rows.count === sent && (rows.ids?.size ?? sent) === sent && missing === 0 && extra === 0;
  console.log(exact ? '  OK: rows = requests sent, each exactly once' : '  FAIL: the rows do not match the requests sent');
  return exact;
}

function loadAverage() {
  return os
    .loadavg()
    .map((load) => load.toFixed(1))
    .join(' ');
}

/** @param {number} bytes */
function mib(bytes) {
  return (bytes / 2 ** 20).toFixed(1);
}

/**
 * The standalone server (dist/cli.js) on the gateway core, with a config file of the mock's chat
 * model, the bench key and the request log; an admin key, so that `/admin/status` tells the sink's counts.
 */
async function startStandalone() {
  const adminKey = `bench-admin-${randomBytes(12).toString('hex')}`;
  const configPath = join(os.tmpdir(), `infergate-bench-request-log-${process.pid}.json`);
  const config = {
    keys: [{ key: BENCH_KEY, id: 'bench' }],
    providers: { oai: { type: 'openai', baseURL: `${mockOrigin}/v1`, apiKey: 'sk-mock', responses: false } },
    models: [{ id: 'bench-chat', provider: 'oai', upstreamModel: 'mock-model' }],
    requestLog: database ? { type: 'postgres', url: database.url, schema: database.schema } : { type: 'memory' },
  };
  writeFileSync(configPath, JSON.stringify(config));
  process.on('exit', () => rmSync(configPath, { force: true }));
  const port = await freePort();
  const cli = new URL('../dist/cli.js', import.meta.url).pathname;
  const { command, args } = nodeCommand(cli, ['--config', configPath, '--port', String(port)], GATEWAY_CORE);
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, INFERGATE_ADMIN_KEY: adminKey } });
  children.push(child);
  // Its access log (a line a request) is read and dropped; the last lines are kept to say why it stopped.
  let said = '';
  const keep = (/** @type {Buffer} */ chunk) => void (said = (said + chunk.toString()).slice(-4000));
  child.stderr?.on('data', keep);
  await new Promise((resolveUp, reject) => {
    const timer = setTimeout(() => reject(new Error(`the standalone server did not start in 30 s:\n${said}`)), 30_000);
    child.stdout?.on('data', (/** @type {Buffer} */ chunk) => {
      keep(chunk);
      if (said.includes('infergate listening on')) {
        clearTimeout(timer);
        resolveUp(undefined);
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the standalone server exited (${code}):\n${said}`));
    });
  });
  child.stdout?.resume();
  return { pid: /** @type {number} */ (child.pid), port, adminKey };
}

/**
 * The sink's counts once it has written every request sent (or after 60 s), from `/admin/status`.
 * @param {{ port: number, adminKey: string }} gateway @param {number} sent
 * @returns {Promise<import('infergate').SinkStats | undefined>}
 */
async function drained(gateway, sent) {
  /** @type {import('infergate').SinkStats | undefined} */
  let sink;
  const deadline = Date.now() + 60_000;
  do {
    const status = await fetch(`http://127.0.0.1:${gateway.port}/admin/status`, { headers: { authorization: `Bearer ${gateway.adminKey}` } });
    sink = status.ok ? (await status.json()).sink : undefined;
    if (sink && sink.queued === 0 && sink.written + sink.dropped + sink.failedRows >= sent) return sink;
    await new Promise((resolve) => setTimeout(resolve, 500));
  } while (Date.now() < deadline);
  return sink;
}

/**
 * The rows the log holds: in Postgres, every one read back through a reader on the run's schema
 * (newest first, page by page), with its request id; in memory, only the sink's count of rows written.
 * @param {number} written
 * @returns {Promise<{ count: number, ids?: Set<string> }>}
 */
async function storedRows(written) {
  if (!database) return { count: written };
  const reader = await openRequestLog({ kind: 'postgres', url: database.url, schema: database.schema });
  /** @type {Set<string>} */
  const ids = new Set();
  let count = 0;
  /** @type {string | undefined} */
  let cursor;
  do {
    const page = await reader.query({ limit: 500, ...(cursor ? { cursor } : {}) });
    for (const stored of page.data) {
      count++;
      ids.add(stored.requestId);
    }
    cursor = page.next;
  } while (cursor);
  await reader.close();
  return { count, ids };
}
