#!/usr/bin/env node
// The response cache cell: latency of a cache hit against a miss, on one Chat model passed
// through to the mock upstream (`npm run build` first; see docs/benchmark.md).
//
//   node bench/cache-hit.mjs [--requests N] [--ttfb MS] [--out FILE]
//
// A miss is a request never seen before (a counter in the prompt): the gateway calls the mock and
// keeps the answer. A hit repeats one request: the gateway answers from its memory cache and the
// mock is not called (checked with the mock's request count and the x-infergate-cache header).
// JSON answers and streams (time to the last byte), one request at a time, then the request rate
// of hits and misses at concurrency 16. Processes pinned as in run.mjs: mock and load on core 0,
// the gateway on core 1. --ttfb delays the mock's first byte, as a real model's would.
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GATEWAY_CORE, LOAD_CORE, pinned, pinSelf, startChild, stopAll } from './lib/children.mjs';
import { buildRequest, Connection } from './lib/http-client.mjs';
import { BENCH_KEY, body } from './lib/payloads.mjs';
import { summarize } from './lib/stats.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const argv = process.argv.slice(2);
const value = (/** @type {string} */ name, /** @type {string} */ fallback) => {
  const i = argv.indexOf(name);
  return i >= 0 && argv[i + 1] !== undefined ? /** @type {string} */ (argv[i + 1]) : fallback;
};
const requests = Number(value('--requests', '2000'));
const ttfbMs = Number(value('--ttfb', '0'));
const out = value('--out', '');
const MODEL = 'bench-chat-cache';

const log = (/** @type {string} */ message) => console.error(`[cache-hit ${new Date().toISOString().slice(11, 19)}] ${message}`);
const watchdog = setTimeout(() => {
  console.error('cache-hit: still running after 10 min; stopping');
  stopAll();
  process.exit(2);
}, 10 * 60_000);
watchdog.unref();

pinSelf();
const mock = await startChild('mock', join(here, 'mock-upstream.mjs'), [], LOAD_CORE);
const gateway = await startChild('infergate', join(here, 'gateway-server.mjs'), [`http://127.0.0.1:${mock.port}`, '--response-cache'], GATEWAY_CORE);
await mock.ipc('config', { ttfbMs, words: 40, chunks: 20, intervalMs: 0 });
const host = `127.0.0.1:${gateway.port}`;

/** @param {string} prompt @param {boolean} stream */
const requestFor = (prompt, stream) =>
  buildRequest(
    '/v1/chat/completions',
    { authorization: `Bearer ${BENCH_KEY}`, 'content-type': 'application/json' },
    body('chat', MODEL, stream, { prompt }),
    host,
  );

/**
 * One request, timed to its last byte; fails unless it is a 200 with the expected cache header.
 * @param {Connection} conn @param {Buffer} bytes @param {'hit' | 'miss'} expected
 */
function timed(conn, bytes, expected) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    /** @type {string | undefined} */
    let cache;
    void conn.send(bytes, {
      onHead: (status, headers) => {
        cache = status === 200 ? headers['x-infergate-cache'] : `HTTP ${status}`;
      },
      onBody() {},
      onEnd() {
        if (cache !== expected) reject(new Error(`expected a cache ${expected}, got ${cache}`));
        else resolve(performance.now() - t0);
      },
      onError: reject,
    });
  });
}

let unique = 0;
const missPrompt = () => `Name three colours of the rainbow (run ${process.pid}, request ${unique++}).`;
const HIT_PROMPT = 'Name three colours of the rainbow, and say which one has the shortest wavelength.';

/** Latencies of `count` requests one at a time. @param {boolean} stream @param {'hit' | 'miss'} kind @param {number} count */
async function sequential(stream, kind, count) {
  const conn = new Connection(gateway.port);
  const latencies = [];
  for (let i = 0; i < count; i++) latencies.push(await timed(conn, requestFor(kind === 'hit' ? HIT_PROMPT : missPrompt(), stream), kind));
  conn.close();
  return latencies;
}

/** Requests per second at concurrency 16 for a while. @param {'hit' | 'miss'} kind @param {number} durationMs */
async function rate(kind, durationMs) {
  let done = 0;
  const deadline = performance.now() + durationMs;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      const conn = new Connection(gateway.port);
      while (performance.now() < deadline) {
        await timed(conn, requestFor(kind === 'hit' ? HIT_PROMPT : missPrompt(), false), kind);
        done++;
      }
      conn.close();
    }),
  );
  return done / ((performance.now() - started) / 1000);
}

const upstreamCalls = async () => /** @type {{ requests: number }} */ (await mock.ipc('stats')).requests;

// Warm-up: the code paths and the one hit entry (a JSON miss stores the answer streams replay too).
await sequential(false, 'miss', 200);
await sequential(true, 'miss', 200);
await timed(new Connection(gateway.port), requestFor(HIT_PROMPT, false), 'miss');
await sequential(false, 'hit', 200);
await sequential(true, 'hit', 200);

/** @type {Record<string, ReturnType<typeof summarize>>} */
const latency = {};
/** @type {Record<string, number>} */
const rps = {};
for (const stream of [false, true]) {
  const mode = stream ? 'stream' : 'json';
  log(`${mode}: ${requests} misses, then ${requests} hits, one at a time`);
  latency[`${mode}/miss`] = summarize(await sequential(stream, 'miss', requests));
  const before = await upstreamCalls();
  latency[`${mode}/hit`] = summarize(await sequential(stream, 'hit', requests));
  const calls = (await upstreamCalls()) - before;
  if (calls !== 0) throw new Error(`${calls} upstream calls during ${requests} hits`);
}
log('request rate at concurrency 16 (JSON), 3 s each');
rps.miss = await rate('miss', 3000);
rps.hit = await rate('hit', 3000);

const result = { date: new Date().toISOString(), pinned, requests, mockTtfbMs: ttfbMs, latencyMs: latency, rpsC16: rps };
const ms = (/** @type {number} */ v) => v.toFixed(2);
const lines = [
  `response cache, chat passthrough, mock ttfb ${ttfbMs} ms, ${requests} requests per row${pinned ? '' : ' (NOT pinned)'}`,
  '| mode | p50 ms | p90 ms | p99 ms |',
  '|---|---|---|---|',
  ...Object.entries(latency).map(([key, s]) => `| ${key} | ${ms(s.p50)} | ${ms(s.p90)} | ${ms(s.p99)} |`),
  `requests/s at concurrency 16 (JSON): miss ${rps.miss.toFixed(0)}, hit ${rps.hit.toFixed(0)}`,
];
console.log(lines.join('\n'));
if (out) writeFileSync(out, JSON.stringify(result, null, 2) + '\n');
await gateway.ipc('shutdown').catch(() => {});
stopAll();
process.exit(0);
