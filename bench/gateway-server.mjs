// The gateway under test: the BUILT library (dist/, `npm run build`) mounted on node:http, with
// providers pointing at the mock upstream. One process, pinned to one core by the runner.
// Usage: node bench/gateway-server.mjs <mock origin>   (started by bench/run.mjs or bench/profile.mjs)
import http from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { announce, serveIpc } from './lib/ipc.mjs';

// INFERGATE_DIST=<folder> runs another build (e.g. a copy of dist/ from another commit) for A/B runs.
const dist = process.env.INFERGATE_DIST ? pathToFileURL(resolve(process.env.INFERGATE_DIST, 'index.js')).href : '../dist/index.js';
/** @type {typeof import('../dist/index.js')} */
const { createAnthropicProvider, createGateway, createOpenAIProvider } = await import(dist);

const mock = process.argv[2] ?? 'http://127.0.0.1:8080';

export const BENCH_KEY = 'sk-bench';

const gateway = createGateway({
  keys: [{ key: BENCH_KEY, id: 'bench' }],
  providers: {
    // Chat-only OpenAI-compatible upstream: Responses and Messages clients are translated.
    oai: createOpenAIProvider({ baseURL: `${mock}/v1`, apiKey: 'sk-mock', responses: false }),
    // The same upstream, also serving /responses: Responses clients pass through.
    oaiResponses: createOpenAIProvider({ baseURL: `${mock}/v1`, apiKey: 'sk-mock', responses: true }),
    anthropic: createAnthropicProvider({ baseURL: mock, apiKey: 'sk-mock' }),
  },
  models: [
    { id: 'bench-chat', provider: 'oai', upstreamModel: 'mock-model' },
    { id: 'bench-responses', provider: 'oaiResponses', upstreamModel: 'mock-model' },
    { id: 'bench-anthropic', provider: 'anthropic', upstreamModel: 'mock-model' },
  ],
  logger: false,
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
  shutdown() {
    // A normal exit, so `--cpu-prof` writes its profile.
    server.close();
    setImmediate(() => process.exit(0));
    return true;
  },
});

server.listen(0, '127.0.0.1', () => announce({ port: /** @type {import('node:net').AddressInfo} */ (server.address()).port }));
