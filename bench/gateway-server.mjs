// The gateway under test: the BUILT library (dist/, `npm run build`) mounted on node:http, with
// providers pointing at the mock upstream. One process, pinned to one core by the runner.
// Usage: node bench/gateway-server.mjs <mock origin> [--soak] [--task-ttl-ms N] [--response-cache] [--metrics]
//   (--response-cache: the response cache on, in memory, for the model `bench-chat-cache`; bench/cache-hit.mjs)
//   (--metrics: metrics on, into infergate/metrics' metricsHandler, collected as a scrape would every second)
//   (--guardrails regex|secrets: that guardrail on every text request's answer, masking: bench/run.mjs --guardrails)
//   (--request-log memory|postgres: the request log on, bench/request-log.mjs; Postgres at REQUEST_LOG_URL in the
//   schema REQUEST_LOG_SCHEMA; the `requestLog` IPC command flushes it and says its sink's counts;
//   --capture-content: prompts and answers kept too, `captureContent`)
//   (started by bench/run.mjs, bench/profile.mjs, or bench/soak.mjs with --soak: the gateway then
//   logs into a counting logger and the `sample` IPC command reports its health, lib/health-probe.mjs)
import http from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { healthProbe } from './lib/health-probe.mjs';
import { announce, serveIpc } from './lib/ipc.mjs';
import { openRequestLog } from './lib/request-log-sink.mjs';
import { gatewayStores, inventory } from './lib/store-inventory.mjs';

// INFERGATE_DIST=<folder> runs another build (e.g. a copy of dist/ from another commit) for A/B runs.
const dist = process.env.INFERGATE_DIST ? pathToFileURL(resolve(process.env.INFERGATE_DIST, 'index.js')).href : '../dist/index.js';
/** @type {typeof import('infergate')} */
const { createAnthropicProvider, createGateway, createOpenAIProvider, MemoryTaskStore } = await import(dist);

const mock = process.argv[2] ?? 'http://127.0.0.1:8080';
const probe = process.argv.includes('--soak') ? healthProbe() : undefined;

/** The default task store, telling how many tasks it holds (its private map, read for the soak). */
class CountingTaskStore extends MemoryTaskStore {
  held() {
    return /** @type {any} */ (this).tasks.size;
  }
}
// --task-ttl-ms N: the soak keeps tasks briefly, so that the store reaches its steady state within
// the run (builds whose store takes no options ignore it and keep every task).
const ttlArg = process.argv.indexOf('--task-ttl-ms');
const ttlMs = ttlArg > 0 ? Number(process.argv[ttlArg + 1]) : 0;
const taskStore = new CountingTaskStore(ttlMs > 0 ? { ttlMs } : {});
// Only the cache cell turns it on: the other cells measure the gateway without it.
const responseCache = process.argv.includes('--response-cache');
// The metrics arm of bench/run.mjs --metrics: recorded, and serialized every second as a (very
// eager) Prometheus scrape would have them, in this process so that its CPU counts.
const metrics = process.argv.includes('--metrics')
  ? /** @type {typeof import('infergate/metrics')} */ (await import(dist.replace(/index\.js$/, 'metrics.js'))).metricsHandler()
  : undefined;
if (metrics) setInterval(() => void metrics.text(), 1000).unref();
// The guardrail arms of bench/run.mjs --guardrails: the answer checked by one local detector,
// masking what it finds (the mock's text has nothing to find: the cost of checking alone).
const guardrailArg = process.argv.indexOf('--guardrails');
const guardrailType = guardrailArg > 0 ? process.argv[guardrailArg + 1] : undefined;
/** @type {Record<string, import('infergate').GuardrailConfig[]>} */
const guardrailLists = {
  regex: [{ type: 'regex', name: 'ticket-ids', phase: 'output', action: 'mask', patterns: [{ category: 'ticket', pattern: String.raw`\bTCK-\d{6}\b` }] }],
  secrets: [{ type: 'secrets', phase: 'output', action: 'mask' }],
};
const guardrails = guardrailType === undefined ? undefined : guardrailLists[guardrailType];
if (guardrailType && !guardrails) throw new Error(`--guardrails takes regex or secrets, not ${guardrailType}`);
const requestLogArg = process.argv.indexOf('--request-log');
const requestLog =
  requestLogArg > 0
    ? await openRequestLog({
        kind: /** @type {'memory' | 'postgres'} */ (process.argv[requestLogArg + 1]),
        url: process.env.REQUEST_LOG_URL,
        schema: process.env.REQUEST_LOG_SCHEMA,
        distIndex: new URL(dist, import.meta.url).href,
      })
    : undefined;

export const BENCH_KEY = 'sk-bench';

const gateway = createGateway({
  keys: [{ key: BENCH_KEY, id: 'bench' }],
  providers: {
    // Chat-only OpenAI-compatible upstream: Responses and Messages clients are translated.
    oai: createOpenAIProvider({ baseURL: `${mock}/v1`, apiKey: 'sk-mock', responses: false }),
    // The same upstream, also serving /responses: Responses clients pass through.
    oaiResponses: createOpenAIProvider({ baseURL: `${mock}/v1`, apiKey: 'sk-mock', responses: true }),
    // A Responses-only upstream: Chat and Messages clients are translated into Responses.
    oaiResponsesOnly: createOpenAIProvider({ baseURL: `${mock}/v1`, apiKey: 'sk-mock', chat: false, responses: true }),
    anthropic: createAnthropicProvider({ baseURL: mock, apiKey: 'sk-mock' }),
  },
  models: [
    { id: 'bench-chat', provider: 'oai', upstreamModel: 'mock-model' },
    { id: 'bench-responses', provider: 'oaiResponses', upstreamModel: 'mock-model' },
    { id: 'bench-responses-only', provider: 'oaiResponsesOnly', upstreamModel: 'mock-model' },
    { id: 'bench-anthropic', provider: 'anthropic', upstreamModel: 'mock-model' },
    { id: 'bench-image', provider: 'oai', upstreamModel: 'mock-image', kind: 'image' },
    { id: 'bench-speech', provider: 'oai', upstreamModel: 'mock-speech', kind: 'speech' },
    { id: 'bench-video', provider: 'oai', upstreamModel: 'mock-video', kind: 'video' },
    // The bench's bodies sample (temperature 0.2): the cached model allows it.
    ...(responseCache ? [{ id: 'bench-chat-cache', provider: 'oai', upstreamModel: 'mock-model', cache: { allowSampling: true } }] : []),
  ],
  ...(responseCache ? { responseCache: { ttlSeconds: 3600, maxEntries: 100_000 } } : {}),
  taskStore,
  ...(metrics ? { metrics: { meterProvider: metrics.meterProvider } } : {}),
  ...(guardrails ? { policies: { guardrails } } : {}),
  ...(requestLog ? { requestLog } : {}),
  ...(process.argv.includes('--capture-content') ? { captureContent: true } : {}),
  logger: probe?.logger ?? false,
});

const server = http.createServer({ noDelay: true }, gateway);
server.keepAliveTimeout = 120_000;
server.headersTimeout = 60_000;
server.requestTimeout = 0;

/** @type {import('node:perf_hooks').IntervalHistogram | undefined} */
let eld;

serveIpc({
  /** Starts an event-loop delay histogram (1 ms timer), only while a measurement needs it. */
  eldStart() {
    eld?.disable();
    eld = monitorEventLoopDelay({ resolution: 1 });
    eld.enable();
    return true;
  },
  eldRead() {
    if (!eld) return undefined;
    eld.disable();
    const ms = (/** @type {number} */ ns) => ns / 1e6;
    const result = { maxMs: ms(eld.max), p99Ms: ms(eld.percentile(99)), p50Ms: ms(eld.percentile(50)), meanMs: ms(eld.mean), count: eld.count };
    eld = undefined;
    return result;
  },
  memory: () => process.memoryUsage(),
  /** Health now (soak only); `{ gc: true }` also collects garbage and reads the live heap. */
  sample(/** @type {{ gc?: boolean } | undefined} */ args) {
    if (!probe) throw new Error('start the gateway server with --soak to sample it');
    return { ...probe.sample(args), videoTasks: taskStore.held() };
  },
  summary: () => probe?.summary(),
  /** Writes what the request log holds, then its sink's counts (`written`, `dropped`…). */
  async requestLog() {
    if (!requestLog) throw new Error('start the gateway server with --request-log');
    await requestLog.flush();
    return requestLog.sinkStats();
  },
  /** What each store and cache holds, entries and live heap; empties them (soak only, after the load). */
  stores() {
    if (!probe) throw new Error('start the gateway server with --soak to take its inventory');
    return inventory(gatewayStores(gateway.options), () => /** @type {number} */ (probe.sample({ gc: true }).liveHeap));
  },
  shutdown() {
    // A normal exit, so `--cpu-prof` writes its profile.
    server.close();
    setImmediate(() => process.exit(0));
    return true;
  },
});

server.listen(0, '127.0.0.1', () => announce({ port: /** @type {import('node:net').AddressInfo} */ (server.address()).port }));
