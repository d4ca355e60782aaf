// One of the scale-out bench's gateway processes (bench/scale-out.mjs starts 1, 2 or 4 of them):
// the BUILT library (dist/) on node:http, its limits and budgets in a RedisLimitEngine that all
// of them share, the mock upstream behind it.
// Usage: node bench/scale-out-gateway.mjs <mock origin> --prefix P (--redis URL | --cluster host:port,…)
//          --limit RPM --budget-usd USD [--flaky ORIGIN --index I [--health-bus]]
//   (--flaky: the model `bench-reroute` has two deployments, `flaky` (that upstream, at /p<I>/v1,
//    so that it knows which process called) and `steady` (the mock); --health-bus: the processes
//    share deployment health through a RedisHealthBus on the same Redis and prefix)
import http from 'node:http';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { announce, serveIpc } from './lib/ipc.mjs';
import { BUDGET_KEY, FAILURES_TO_OPEN, LIMIT_KEY, LOAD_KEY, MODEL, MODEL_PRICE, REROUTE_MODEL } from './lib/scale-out-keys.mjs';

const dist = process.env.INFERGATE_DIST ? resolve(process.env.INFERGATE_DIST) : resolve(import.meta.dirname, '../dist');
/** @type {typeof import('infergate')} */
const { createGateway, createOpenAIProvider } = await import(pathToFileURL(resolve(dist, 'index.js')).href);
/** @type {typeof import('infergate/redis')} */
const redisEntry = await import(pathToFileURL(resolve(dist, 'redis.js')).href);
const { RedisLimitEngine } = redisEntry;

const argv = process.argv.slice(2);
const value = (/** @type {string} */ name) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
const mock = argv[0] ?? 'http://127.0.0.1:8080';
const url = value('--redis');
const cluster = value('--cluster');
const limit = Number(value('--limit'));
const budgetUsd = Number(value('--budget-usd'));

const flaky = value('--flaky');
const index = Number(value('--index') ?? 0);
const redis = { ...(cluster ? { cluster: { nodes: cluster.split(',') } } : { url }), keyPrefix: value('--prefix') ?? 'infergate-bench:' };
const limitEngine = new RedisLimitEngine(redis);
const healthBus = argv.includes('--health-bus') ? newHealthBus() : undefined;

/** The Redis health bus, from a build that has it (issue 24); the runner checks before it asks. */
function newHealthBus() {
  const { RedisHealthBus } = /** @type {any} */ (redisEntry);
  if (typeof RedisHealthBus !== 'function') throw new Error(`${dist}/redis.js has no RedisHealthBus`);
  return new RedisHealthBus(redis);
}

const gateway = createGateway({
  keys: [
    // Throughput: a limit and a budget far out of reach, so that every request still runs the
    // engine's admit and settle on Redis (and reads and adds to the budget), as a limited key does.
    { key: LOAD_KEY.key, id: LOAD_KEY.id, limits: { requestsPerMinute: 1e9 }, budget: { usd: 1e9 } },
    // Exactness: a small per-minute limit, and a small lifetime budget, hit by a burst.
    { key: LIMIT_KEY.key, id: LIMIT_KEY.id, limits: { requestsPerMinute: limit } },
    { key: BUDGET_KEY.key, id: BUDGET_KEY.id, budget: { usd: budgetUsd } },
  ],
  providers: {
    oai: createOpenAIProvider({ baseURL: `${mock}/v1`, apiKey: 'sk-mock', responses: false }),
    ...(flaky ? { flaky: createOpenAIProvider({ baseURL: `${flaky}/p${index}/v1`, apiKey: 'sk-mock', responses: false }) } : {}),
  },
  models: [
    { id: MODEL, provider: 'oai', upstreamModel: 'mock-model', price: MODEL_PRICE },
    ...(flaky
      ? [
          {
            id: REROUTE_MODEL,
            upstreamModel: 'mock-model',
            price: MODEL_PRICE,
            deployments: [
              { provider: 'flaky', id: 'flaky' },
              { provider: 'oai', id: 'steady' },
            ],
          },
        ]
      : []),
  ],
  policies: {
    limitEngine,
    // Closed: had Redis failed, a request would be refused rather than let through unlimited,
    // which would show as a limit overshot.
    whenLimitsUnavailable: 'closed',
    // A breaker that opens stays open beyond the reroute check's window: no probe goes back meanwhile.
    retry: { cooldownMs: 60_000, failuresBeforeCooldown: FAILURES_TO_OPEN },
    ...(healthBus ? { healthBus, instanceId: `gateway-${index}` } : {}),
  },
  logger: false,
});

const server = http.createServer({ noDelay: true }, gateway);
server.keepAliveTimeout = 120_000;
server.headersTimeout = 60_000;
server.requestTimeout = 0;

serveIpc({
  async shutdown() {
    server.close();
    await Promise.all([limitEngine.close(), healthBus?.close?.()]);
    setImmediate(() => process.exit(0));
    return true;
  },
});

server.listen(0, '127.0.0.1', () => announce({ port: /** @type {import('node:net').AddressInfo} */ (server.address()).port }));
