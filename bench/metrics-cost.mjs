// What recording metrics costs per request, as a paired measure: one process holds two gateways,
// metrics off and on (infergate/metrics' metricsHandler, collected every second as an eager
// scrape would), both passing Chat requests through to the mock upstream (its own process, on
// the other core) over HTTP; JSON and streams of 20 chunks, in interleaved rounds. The machine's
// load falls on both arms alike. Prints the CPU µs per request of each (median of the rounds) and
// the difference, per chunk for the streams.
// Usage: node bench/metrics-cost.mjs [--requests N] [--rounds N] [--concurrency N]   (after `npm run build`)
// Through a variable, as gateway-server.mjs does: dist/ is built by `npm run build`, types come from src/.
const dist = '../dist/';
/** @type {typeof import('infergate')} */
const { createGateway, createOpenAIProvider } = await import(`${dist}index.js`);
/** @type {typeof import('infergate/metrics')} */
const { metricsHandler } = await import(`${dist}metrics.js`);
import { stopAll } from './lib/children.mjs';
import { cpuPerRequest, median, numberOption, pairedMedians, startPairedMock } from './lib/paired-cost.mjs';

const requests = numberOption('--requests', 4000);
const rounds = numberOption('--rounds', 7);
const concurrency = numberOption('--concurrency', 8);
const CHUNKS = 20;

// The gateways (and their load, in-process) on one core, the mock on the other.
const mock = await startPairedMock({ chunks: CHUNKS, intervalMs: 0, ttfbMs: 0 });

const metrics = metricsHandler();
const scrape = setInterval(() => void metrics.text(), 1000);
/** @param {boolean} withMetrics */
const gatewayWith = (withMetrics) =>
  createGateway({
    keys: [{ key: 'sk-bench', id: 'bench' }],
    providers: { oai: createOpenAIProvider({ baseURL: `http://127.0.0.1:${mock.port}/v1`, apiKey: 'sk-mock', responses: false }) },
    models: [{ id: 'bench-chat', provider: 'oai', upstreamModel: 'mock-model' }],
    logger: false,
    ...(withMetrics ? { metrics: { meterProvider: metrics.meterProvider } } : {}),
  });
const arms = { off: gatewayWith(false), on: gatewayWith(true) };

for (const stream of [false, true]) {
  const load = { model: 'bench-chat', stream, requests, concurrency, prompt: 'Say something about metrics.' };
  const { off, on } = await pairedMedians({ off: () => cpuPerRequest(arms.off, load), on: () => cpuPerRequest(arms.on, load) }, rounds);
  const perChunk = stream ? `; per chunk ${(off / CHUNKS).toFixed(2)} and ${(on / CHUNKS).toFixed(2)}` : '';
  console.log(
    `${stream ? `stream (${CHUNKS} chunks)` : 'JSON'}: CPU µs per request (gateway and load in one process), metrics off ${off.toFixed(1)}, on ${on.toFixed(1)}: ` +
      `+${(on - off).toFixed(1)} µs (${(((on - off) / off) * 100).toFixed(1)}%)${perChunk}`,
  );
}
// The recording alone: the metrics plugin of the `on` gateway fed one request's events (an
// attempt and a usage event of a JSON answer, then of a stream) in a loop, CPU µs per request.
const observer = arms.on.options.plugins.find((plugin) => plugin.onUsage && plugin.onRefused && plugin.onGatewayResponse);
const usage = /** @type {import('infergate').UsageEvent} */ ({
  requestId: 'req_1',
  keyId: 'bench',
  endpoint: '/v1/chat/completions',
  kind: 'text',
  stream: false,
  model: 'bench-chat',
  deployment: 'oai',
  provider: 'oai',
  upstreamModel: 'mock-model',
  usage: { input: 12, output: 40 },
  status: 'ok',
  httpStatus: 200,
  attempts: 1,
  startedAt: Date.now(),
  latencyMs: 3,
  overheadMs: 0.2,
  cost: 0,
  costUsd: 0.00001,
  priceSource: 'config',
});
const attempt = /** @type {import('infergate').AttemptEvent} */ ({ ...usage, attempt: 1, willRetry: false });
const request = new Request('http://bench/');
for (const stream of [false, true]) {
  const event = stream ? { ...usage, stream, ttftMs: 1 } : usage;
  const times = [];
  for (let round = 0; round < rounds; round++) {
    const started = process.cpuUsage();
    for (let i = 0; i < requests * 10; i++) {
      observer?.onAttempt?.(attempt);
      observer?.onUsage?.(event, request);
    }
    const cpu = process.cpuUsage(started);
    times.push((cpu.user + cpu.system) / (requests * 10));
  }
  console.log(`recording alone, ${stream ? 'stream' : 'JSON'}: ${median(times).toFixed(1)} µs CPU per request`);
}
clearInterval(scrape);
await metrics.shutdown();
stopAll();
