#!/usr/bin/env node
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { createServerAdapter } from '@whatwg-node/server';
import { AdminCredential } from './admin/admin-credential.js';
import { ADMIN_PATH, createAdminHandler, isAdminTarget } from './admin/admin-handler.js';
import { adminMetricsRoute, isMetricsTarget, METRICS_PATH } from './admin/metrics-route.js';
import { openTeamStores } from './admin/team-stores.js';
import { ChainedKeyStore } from './auth/chained-key-store.js';
import { StaticKeyStore } from './auth/key-store.js';
import { ConfigError, loadConfigFile, type LoadedConfig } from './config.js';
import { createGateway } from './gateway.js';
import { importRedis } from './optional-imports.js';
import { createLocalProvider, localModels } from './providers/local/local-provider.js';

/**
 * The standalone server: `infergate [--config FILE] [--port N] [--host H]`.
 * Without a config it serves the local provider with one key (`INFERGATE_API_KEY` or a generated
 * one), printed at start. Ctrl-C (SIGINT) or SIGTERM closes the server and providers, exit 0.
 */

const usage = `Usage: infergate [--config FILE] [--port N] [--host H]

Options:
  -c, --config FILE  JSON config file (env INFERGATE_CONFIG). Without one, the offline
                     local provider is served with one key.
  -p, --port N       Port to listen on (env PORT, then the config's "port"; default 8787; 0 = any free port).
  -H, --host H       Host to bind (the config's "host"; default 127.0.0.1).
  -h, --help         Show this help.

Environment:
  INFERGATE_API_KEY    The key to accept when no config file is given (default: a generated sk-local-… key).
  INFERGATE_ADMIN_KEY  The admin key (at least 16 characters; wins over the config's admin.key): it
                       opens GET /metrics and the admin API and dashboard at /admin/
                       (Authorization: Bearer <admin key>), served only when it is set.
`;

const DEFAULT_PORT = 8787;
const DEFAULT_HOST = '127.0.0.1';

interface Setup {
  config: LoadedConfig;
  /**
   * The key to tell the user about: only one the CLI made up (printed whole: nobody else knows
   * it) or took from `INFERGATE_API_KEY` (masked: it is the operator's secret, and stdout often
   * ends up in logs), never a configured one.
   */
  startKey?: { key: string; fromEnvironment: boolean };
  configPath?: string;
}

async function main(): Promise<void> {
  const args = parseCommandLine(process.argv.slice(2));
  if (args.help) {
    process.stdout.write(usage);
    return;
  }
  const setup = await loadSetup(args.config ?? nonEmpty(process.env.INFERGATE_CONFIG));
  const port = parsePort(args.port, '--port') ?? parsePort(nonEmpty(process.env.PORT), 'PORT') ?? setup.config.port ?? DEFAULT_PORT;
  const host = args.host ?? setup.config.host ?? DEFAULT_HOST;

  const {
    port: _port,
    host: _host,
    redisTaskStore,
    redisLimitStore,
    redisHealthBus,
    redisResponseStore,
    redisCacheStore,
    redisUsageStore,
    redisMcpSessionStore,
    adminKey: configAdminKey,
    metrics: metricsWanted,
    keyStoreConfig,
    requestLogConfig,
    ...options
  } = setup.config;
  const adminKey = nonEmpty(process.env.INFERGATE_ADMIN_KEY) ?? configAdminKey;
  const admin = adminCredentialOf(adminKey);
  // No key in the file, and none can be made here nor by another instance: nobody could call.
  if (options.keys.length === 0 && !admin && (keyStoreConfig?.type ?? 'memory') === 'memory') {
    throw new UsageError('the config lists no keys and its keyStore is in memory: set INFERGATE_ADMIN_KEY (or admin.key) to make keys at run time');
  }
  if (admin && /^\/admin(\/|$)/.test(options.basePath ?? '')) {
    throw new UsageError(`basePath "${options.basePath}" is where the admin API is served (/admin): choose another basePath`);
  }
  const team = await openTeamStores(keyStoreConfig, requestLogConfig, admin !== undefined);
  // Metrics are scraped with the admin key: without one nobody could read them, so none are kept.
  const metrics = admin && metricsWanted !== false ? (await import('./metrics.js')).metricsHandler() : undefined;
  const redis =
    redisTaskStore || redisLimitStore || redisHealthBus || redisResponseStore || redisCacheStore || redisUsageStore || redisMcpSessionStore
      ? await importRedis()
      : undefined;
  const taskStore = redisTaskStore ? new redis!.RedisTaskStore(redisTaskStore) : undefined;
  const limitEngine = redisLimitStore ? new redis!.RedisLimitEngine(redisLimitStore) : undefined;
  const healthBus = redisHealthBus ? new redis!.RedisHealthBus(redisHealthBus) : undefined;
  const responseStore = redisResponseStore ? new redis!.RedisResponseStore(redisResponseStore) : undefined;
  const cacheStore = redisCacheStore ? new redis!.RedisCacheStore(redisCacheStore) : undefined;
  const usageStore = redisUsageStore ? new redis!.RedisUsageStore(redisUsageStore) : undefined;
  const mcpSessionStore = redisMcpSessionStore ? new redis!.RedisMcpSessionStore(redisMcpSessionStore) : undefined;
  const gateway = createGateway({
    // Standalone, one line per request is what an operator expects to see.
    accessLog: true,
    ...options,
    // The config file's keys first, then those made at run time.
    keys: team.keys ? new ChainedKeyStore([new StaticKeyStore(options.keys), team.keys]) : options.keys,
    requestLog: team.log,
    taskStore,
    policies: limitEngine || healthBus ? { ...options.policies, limitEngine, healthBus } : options.policies,
    responseStore,
    ...(usageStore ? { usageStore } : team.usageStore ? { usageStore: team.usageStore } : {}),
    responseCache: cacheStore ? { ...(typeof options.responseCache === 'object' ? options.responseCache : {}), store: cacheStore } : options.responseCache,
    metrics: metrics ? { meterProvider: metrics.meterProvider } : false,
    mcp: options.mcp && mcpSessionStore ? { ...options.mcp, sessionStore: mcpSessionStore } : options.mcp,
  });
  const metricsRoute = admin && metrics ? createServerAdapter(adminMetricsRoute(admin, metrics)) : undefined;
  const adminHandler =
    adminKey !== undefined && team.keys
      ? createAdminHandler({ key: adminKey, keys: team.keys, log: team.log, health: () => gateway.options.policies.health.snapshot() })
      : undefined;
  // /metrics and /admin are outside the gateway's basePath, where operators' tools look.
  const server = createServer((req, res) => {
    if (metricsRoute && isMetricsTarget(req.url)) return metricsRoute(req, res);
    if (adminHandler && isAdminTarget(req.url)) return adminHandler(req, res);
    return gateway(req, res);
  });
  await listen(server, port, host);

  // The printed URL includes the base path, so `url + '/v1'` is always the OpenAI SDK's baseURL.
  const url = `http://${urlHost(host)}:${(server.address() as AddressInfo).port}${(options.basePath ?? '').replace(/\/+$/, '')}`;
  const models = options.models.map((model) => model.id);
  const lines = [`infergate listening on ${url}`];
  if (setup.configPath) lines.push(`Config: ${setup.configPath}`, `API keys: from the config file (${options.keys.length})`);
  const { startKey } = setup;
  if (startKey) lines.push(startKey.fromEnvironment ? `API key: ${masked(startKey.key)} (from INFERGATE_API_KEY)` : `API key: ${startKey.key}`);
  lines.push(metricsLine(admin !== undefined, metricsWanted, url));
  lines.push(
    adminHandler ? `Dashboard: ${new URL(url).origin}${ADMIN_PATH}/ (sign in with the admin key; the API is below it)` : 'Dashboard: not served (no admin key)',
  );
  lines.push(...team.lines);
  lines.push(`Models: ${models.join(', ') || '(none)'}`);
  const textModel = options.models.find((model) => (model.kind ?? 'text') === 'text');
  if (textModel) {
    const body = JSON.stringify({ model: textModel.id, messages: [{ role: 'user', content: 'Hello' }] });
    const auth = !startKey ? '<your key>' : startKey.fromEnvironment ? '$INFERGATE_API_KEY' : startKey.key;
    lines.push(`Try: curl ${url}/v1/chat/completions -H "Authorization: Bearer ${auth}" -H "Content-Type: application/json" -d '${body}'`);
  }
  process.stdout.write(lines.join('\n') + '\n');

  let stopping = false;
  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) {
      // A second Ctrl-C while closing: the user wants out now.
      process.exit(1);
    }
    stopping = true;
    process.stderr.write(`infergate: ${signal} received, shutting down\n`);
    shutdown(server, setup.config, async () => {
      await gateway.dispose();
      await Promise.all([
        taskStore?.close(),
        limitEngine?.close(),
        healthBus?.close(),
        responseStore?.close(),
        cacheStore?.close(),
        usageStore?.close(),
        mcpSessionStore?.close(),
        metrics?.shutdown(),
        // Flushes the rows still queued.
        team.log?.close(),
        team.keys?.close?.(),
      ]);
    }).then(
      () => process.exit(0),
      (error: unknown) => {
        process.stderr.write(`infergate: error while shutting down: ${(error as Error).message}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

function parseCommandLine(argv: string[]): { config?: string; port?: string; host?: string; help?: boolean } {
  try {
    const { values } = parseArgs({
      args: argv,
      options: {
        config: { type: 'string', short: 'c' },
        port: { type: 'string', short: 'p' },
        host: { type: 'string', short: 'H' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    });
    return values;
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

async function loadSetup(configPath: string | undefined): Promise<Setup> {
  if (configPath) return { config: await loadConfigFile(configPath), configPath };
  const fromEnvironment = nonEmpty(process.env.INFERGATE_API_KEY);
  const key = fromEnvironment ?? 'sk-local-' + randomBytes(16).toString('hex');
  return {
    config: { keys: [{ key, models: '*' }], providers: { local: createLocalProvider() }, models: localModels('local') },
    startKey: { key, fromEnvironment: fromEnvironment !== undefined },
  };
}

function adminCredentialOf(key: string | undefined): AdminCredential | undefined {
  if (key === undefined) return undefined;
  try {
    return new AdminCredential(key);
  } catch (error) {
    throw new UsageError(`INFERGATE_ADMIN_KEY: ${(error as Error).message}`);
  }
}

/** What the start-up says of `/metrics`: where, or why it is not served. */
function metricsLine(hasAdminKey: boolean, wanted: boolean | undefined, url: string): string {
  const origin = new URL(url).origin;
  if (!hasAdminKey) return "Metrics: not served (no admin key: set INFERGATE_ADMIN_KEY or the config's admin.key to serve /metrics)";
  if (wanted === false) return 'Metrics: off (the config says "metrics": false)';
  return `Metrics: ${origin}${METRICS_PATH} (Authorization: Bearer <admin key>)`;
}

/** `sk-…9f8e`: enough to tell which key it is, not enough to use it (a short key shows nothing). */
function masked(key: string): string {
  return key.length >= 16 ? `${key.slice(0, 3)}…${key.slice(-4)}` : '…';
}

function parsePort(value: string | undefined, source: string): number | undefined {
  if (value === undefined) return undefined;
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65535) throw new UsageError(`${source} must be a port number 0-65535, got "${value}"`);
  return port;
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** Stops accepting, drops open connections (streams included), then releases the gateway and providers. */
async function shutdown(server: Server, config: LoadedConfig, disposeGateway: () => Promise<void> | void): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeAllConnections();
  await closed;
  await disposeGateway();
  await Promise.all(Object.values(config.providers).map((provider) => provider.close?.()));
}

/** A host as it goes in a URL: wildcards become localhost, IPv6 literals get brackets. */
function urlHost(host: string): string {
  if (host === '0.0.0.0' || host === '::') return 'localhost';
  return host.includes(':') ? `[${host}]` : host;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}

class UsageError extends Error {}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) {
    process.stderr.write(`infergate: ${error.message}\n`);
  } else if (error instanceof UsageError) {
    process.stderr.write(`infergate: ${error.message}\n\n${usage}`);
  } else if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE' || (error as NodeJS.ErrnoException).code === 'EACCES') {
    process.stderr.write(`infergate: cannot listen: ${(error as Error).message}\n`);
  } else {
    process.stderr.write(`infergate: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  }
  process.exit(1);
});
