import type { McpOptions } from './mcp/mcp-options.js';
import { checkMcpOptions, checkMcpPatterns } from './mcp/mcp-schema.js';
import type { McpToolCallEvent } from './mcp/tool-call-event.js';
import { StaticKeyStore, type KeyStore, type StaticKey } from './auth/key-store.js';
import { jsonLogger, silentLogger, type Logger } from './logger.js';
import { DEFAULT_CONTENT_BYTES } from './logs/content-capture.js';
import type { AttemptEvent, UsageEvent } from './policy/events.js';
import type { GatewayPlugin, RequestHookPayload, ResponseHookPayload } from './plugins/plugin.js';
import { checkBudget } from './policy/budget.js';
import { checkLimits, type PolicyOptions } from './policy/policy-options.js';
import { createLocalProvider, localModels } from './providers/local/local-provider.js';
import { normalizeProvider } from './providers/normalize-provider.js';
import type { FlatProvider, Provider } from './providers/provider.js';
import { withoutUndefined, type Defaulted } from './optional.js';
import type { ModelConfig } from './routing/model.js';
import type { ResponseStore } from './state/response-store.js';
import { resolveResponseCache, type ResolvedResponseCache, type ResponseCacheOptions } from './cache/response-cache-options.js';
import type { UsageStore } from './state/usage-store.js';
import type { RequestLogSink } from './logs/request-log.js';
import type { TaskStore } from './tasks/task-store.js';

/**
 * What `createGateway` takes, and its validation: each option checked and defaulted here, with a
 * `TypeError` naming the bad one. What the gateway builds from them is in `runtime.ts`.
 */

export type { AttemptEvent, UsageEvent, RequestHookPayload, ResponseHookPayload };

/** Five fixed hooks: sugar for one plugin (`onRequest` is its `onGatewayRequest`, `onResponse` its `onGatewayResponse`). */
export interface GatewayHooks {
  /** Before routing and authentication. */
  onRequest?: ((payload: RequestHookPayload) => void | Promise<void>) | undefined;
  /** After the response is built, before it is sent. */
  onResponse?: ((payload: ResponseHookPayload) => void | Promise<void>) | undefined;
  /**
   * Once per request that passed the key's limits, when it ends: normalized and raw usage,
   * deployment, latency, time to first byte, status, cost. Text, images, video and speech.
   */
  onUsage?: ((event: UsageEvent) => void | Promise<void>) | undefined;
  /** Once per upstream attempt, so retries and fallbacks are visible. */
  onAttempt?: ((event: AttemptEvent) => void | Promise<void>) | undefined;
  /** Once per `tools/call` through `/mcp`, when it ends: server, tool, outcome, duration, bytes (never the arguments unless `mcp.captureArguments`). */
  onToolCall?: ((event: McpToolCallEvent) => void | Promise<void>) | undefined;
}

export interface GatewayLimits {
  /** Largest JSON body accepted, in bytes. Default 32 MiB (Anthropic's own edge limit). */
  jsonBodyBytes?: number | undefined;
  /** Largest uploaded file in a multipart body (image edits), in bytes. Default 50 MiB. */
  uploadFileBytes?: number | undefined;
  /** Most files in one multipart body (a transcription takes one whatever this says). Default 16. */
  uploadFiles?: number | undefined;
  /**
   * Largest multipart body in all (files and fields), in bytes → 413 as soon as it is passed.
   * Default 64 MiB, or `uploadFileBytes` + 1 MiB when that is more.
   */
  uploadBodyBytes?: number | undefined;
  /**
   * Largest request line + headers, in bytes → 431. Default 32 KiB. Checked in every host; Node's
   * own server refuses more than 16 KiB first (plain 431) unless `maxHeaderSize` is raised.
   */
  headerBytes?: number | undefined;
  /**
   * Most messages (Responses: input items) in one text request, and most content blocks across
   * them → 400 naming `messages` / `input`. Default 10,000 (each costs work in every translation).
   */
  messages?: number | undefined;
  /** Deadline for receiving a request body, from the start of reading, in ms → 408. Default 60,000. */
  requestBodyTimeoutMs?: number | undefined;
  /**
   * Longest silence of an upstream while its answer is read, in ms: a stream then ends with the
   * protocol's error frame. Default 300,000. A provider's own `timeouts.bodyMs` wins.
   */
  streamIdleTimeoutMs?: number | undefined;
}

export interface GatewayOptions {
  /**
   * Who may call: a `KeyStore` or a list of static keys. Required: a gateway with no keys would
   * answer 401 to everyone, which is never what was meant.
   */
  keys: KeyStore | readonly StaticKey[];
  /** Upstreams by name. Default `{ local: createLocalProvider() }`. */
  providers?: Record<string, Provider | FlatProvider> | undefined;
  /** The public model catalog. Default: the local provider's models. */
  models?: readonly ModelConfig[] | undefined;
  /**
   * Where video tasks live. Default: in memory (one process, lost on restart). Several
   * instances share tasks through a shared store, e.g. `RedisTaskStore` from `infergate/redis`.
   */
  taskStore?: TaskStore | undefined;
  /**
   * Minimum time between two upstream refreshes of one video task's status, in ms: a status read
   * (or the poller) within this interval of the last refresh answers the stored status.
   * Default 2000.
   */
  videoRefreshIntervalMs?: number | undefined;
  /**
   * Refresh unfinished video tasks in the background, so their status advances without reads.
   * Default false (status advances when read). `true` polls every 5000 ms, 20 tasks per round;
   * or `{ intervalMs, batchSize }`. The timer never keeps the process alive, and
   * `gateway.dispose()` stops it.
   */
  videoPoller?: boolean | VideoPollerOptions | undefined;
  /** Path prefix the gateway is mounted under, e.g. `/ai`. Default `''`. */
  basePath?: string | undefined;
  /**
   * Serve `/v1/messages`. Default true. The spec marks it "coming soon": when false it answers
   * 404 in the Anthropic shape and `/v1/models` stops offering `anthropic`.
   */
  messages?: boolean | undefined;
  /** Contract version label sent in `x-contract-version`. Default `2026-11-22`. */
  contractVersion?: string | undefined;
  limits?: GatewayLimits | undefined;
  /** Per-key rate limits and quota, retries and fallback between deployments. */
  policies?: PolicyOptions | undefined;
  /**
   * Where finished Responses are kept for `previous_response_id` (on models with
   * `previousResponseId: true`) and `GET`/`DELETE /v1/responses/{id}`; for responses a Responses
   * upstream stored itself, only which key owns the id and which deployment holds it. Default:
   * in memory when such a model or upstream exists; several instances share
   * `RedisResponseStore` from `infergate/redis`.
   */
  responseStore?: ResponseStore | undefined;
  /**
   * An exact-match cache of text answers (docs/policies.md, "Response cache"), used for models
   * with `cache: true`, keys with `cache: true` and requests with `x-infergate-cache: on`; each
   * key has its own. `true` takes the defaults (in memory, 300 s, 10,000 answers). Default: off.
   */
  responseCache?: ResponseCacheOptions | boolean | undefined;
  /**
   * Where each key's requests, tokens and dollars by day and model are added up, for
   * `GET /v1/usage`. Default: in memory (one process, lost on restart); several instances share
   * `RedisUsageStore` from `infergate/redis`. `false`: nothing is recorded and the route answers 404.
   */
  usageStore?: UsageStore | false | undefined;
  /**
   * The request log (docs/admin.md, "Request log"): one row per usage event, written by this sink
   * off the request's path (`MemoryRequestLog`, or `PostgresRequestLog` from `infergate/postgres`).
   * Default: none.
   */
  requestLog?: RequestLogSink | undefined;
  hooks?: GatewayHooks | undefined;
  /**
   * Plugins by stage (see `GatewayPlugin`): whatwg-node's `onRequest`/`onResponse` plus the
   * gateway's request, authenticated, attempt, usage and response stages. They run after the
   * hooks, in this order.
   */
  plugins?: readonly GatewayPlugin[] | undefined;
  /** Default: JSON lines on stderr. Pass `false` to silence. */
  logger?: Logger | false | undefined;
  /**
   * Hide secrets and prompts in everything written to the logger (key and auth fields, message
   * and input fields, `sk-…`/`Bearer …` in strings). Default true.
   */
  redactLogs?: boolean | undefined;
  /** One structured `request` line per request (ids, model, deployment, status, timing, usage). Default false. */
  accessLog?: boolean | undefined;
  /**
   * OpenTelemetry spans with the GenAI semantic conventions: one per request, one child per
   * upstream attempt. `true` uses the global tracer provider; or pass `{ tracer }`. Needs
   * `@opentelemetry/api` (an optional peer dependency), loaded only when this is set. Default false.
   */
  telemetry?: boolean | { tracer?: TracerLike | undefined } | undefined;
  /**
   * Metrics (docs/metrics.md): GenAI request duration, tokens, time to first token, the gateway's
   * overhead, attempts, fallbacks, refusals, cache hits, dollars and deployment health, recorded
   * through an `@opentelemetry/api` meter after each answer. `true` uses the global meter
   * provider (a host's OpenTelemetry SDK); or pass `{ meterProvider }`, e.g. `metricsHandler()`'s
   * from `infergate/metrics`, which answers Prometheus scrapes. With metrics on, every answer
   * says its overhead in `x-infergate-overhead-ms`. Default false.
   */
  metrics?: boolean | { meterProvider?: MeterProviderLike | undefined } | undefined;
  /**
   * Prompts and answers in each text request's usage event (`event.content`), and so in the
   * request log (docs/admin.md, "Request log"): the client's JSON body as read, and the answer
   * (a JSON body as sent; a stream's text and tool calls, assembled). Credentials are scrubbed
   * from both as from log lines, and each is cut at `maxBytes` (default 32 KiB) with a marker.
   * Default false: no text is kept, and nothing is buffered for it.
   */
  captureContent?: boolean | { maxBytes?: number | undefined } | undefined;
  /** The MCP gateway at `/mcp`: the upstream MCP servers, and where sessions are kept. */
  mcp?: McpOptions | undefined;
}

/** The part of an OpenTelemetry `MeterProvider` the gateway uses. */
export interface MeterProviderLike {
  getMeter(...args: never[]): unknown;
}

/** The part of an OpenTelemetry `Tracer` the gateway uses, so these types need no OpenTelemetry import. */
export interface TracerLike {
  startSpan(...args: never[]): unknown;
}

export interface VideoPollerOptions {
  /** Default 5000. */
  intervalMs?: number | undefined;
  /** Tasks refreshed per round, oldest first. Default 20. */
  batchSize?: number | undefined;
}

/** Options after validation and defaults, before anything is built from them. */
export interface ResolvedOptions {
  keyStore: KeyStore;
  providers: Record<string, Provider>;
  models: readonly ModelConfig[];
  /** The caller's task store, or undefined for the default one in memory. */
  taskStore: TaskStore | undefined;
  videoRefreshIntervalMs: number;
  /** The background poller's settings, or undefined when it is off. */
  videoPoller: Defaulted<VideoPollerOptions> | undefined;
  basePath: string;
  messagesEnabled: boolean;
  contractVersion: string;
  limits: Defaulted<GatewayLimits>;
  policies: PolicyOptions | undefined;
  /** The caller's response store, or undefined to let the runtime decide. */
  responseStore: ResponseStore | undefined;
  /** The response cache's settings and store, or undefined when it is off. */
  responseCache: ResolvedResponseCache | undefined;
  /** The caller's usage store, `false` for none, or undefined for the default one in memory. */
  usageStore: UsageStore | false | undefined;
  requestLog: RequestLogSink | undefined;
  hooks: GatewayHooks;
  plugins: readonly GatewayPlugin[];
  /** The caller's logger (or the default), before redaction. */
  logger: Logger;
  redactLogs: boolean;
  accessLog: boolean;
  /** OpenTelemetry spans: off, or on with the caller's tracer (undefined: the global one). */
  telemetry: false | { tracer: TracerLike | undefined };
  /** Metrics: off, or on with the caller's meter provider (undefined: the global one). */
  metrics: false | { meterProvider: MeterProviderLike | undefined };
  /** The cap of each captured text, or undefined when prompts and answers are not captured. */
  captureContent: { maxBytes: number } | undefined;
  mcp: GatewayOptions['mcp'];
}

export const DEFAULT_CONTRACT_VERSION = '2026-11-22';

/** Validates options and fills defaults; throws a `TypeError` naming the bad option. */
export function resolveOptions(options: GatewayOptions): ResolvedOptions {
  if (!options || typeof options !== 'object') throw new TypeError('createGateway(options): options must be an object');
  const keyStore = resolveKeyStore(options.keys);
  const providers = Object.fromEntries(
    Object.entries(options.providers ?? { local: createLocalProvider() }).map(([name, provider]) => [name, normalizeProvider(name, provider)]),
  );
  const models = options.models ?? (providers.local ? localModels('local') : []);
  const basePath = normalizeBasePath(options.basePath ?? '');
  const contractVersion = options.contractVersion ?? DEFAULT_CONTRACT_VERSION;
  if (!/^\d{4}-\d{2}-\d{2}$/.test(contractVersion)) {
    throw new TypeError(`options.contractVersion must be a date YYYY-MM-DD, got "${contractVersion}"`);
  }
  const limits = {
    jsonBodyBytes: options.limits?.jsonBodyBytes ?? 32 * 1024 * 1024,
    uploadFileBytes: options.limits?.uploadFileBytes ?? 50 * 1024 * 1024,
    uploadFiles: options.limits?.uploadFiles ?? 16,
    uploadBodyBytes: options.limits?.uploadBodyBytes ?? Math.max(64 * 1024 * 1024, (options.limits?.uploadFileBytes ?? 50 * 1024 * 1024) + 1024 * 1024),
    headerBytes: options.limits?.headerBytes ?? 32 * 1024,
    messages: options.limits?.messages ?? 10_000,
    requestBodyTimeoutMs: options.limits?.requestBodyTimeoutMs ?? 60_000,
    streamIdleTimeoutMs: options.limits?.streamIdleTimeoutMs ?? 300_000,
  };
  for (const [name, value] of Object.entries(limits)) {
    if (!Number.isInteger(value) || value < 1) throw new TypeError(`options.limits.${name} must be a positive integer`);
  }
  const taskStore = options.taskStore ?? undefined;
  for (const method of ['get', 'create', 'update', 'pending'] as const) {
    if (taskStore !== undefined && typeof taskStore[method] !== 'function') throw new TypeError(`options.taskStore must be a TaskStore (missing ${method}())`);
  }
  const videoRefreshIntervalMs = options.videoRefreshIntervalMs ?? 2000;
  if (!Number.isInteger(videoRefreshIntervalMs) || videoRefreshIntervalMs < 0) throw new TypeError('options.videoRefreshIntervalMs must be an integer >= 0');
  const store = options.responseStore;
  if (store !== undefined && (typeof store?.get !== 'function' || typeof store.put !== 'function')) {
    throw new TypeError('options.responseStore must be a ResponseStore (get, put)');
  }
  return {
    keyStore,
    providers,
    models,
    taskStore,
    videoRefreshIntervalMs,
    videoPoller: resolvePoller(options.videoPoller),
    basePath,
    messagesEnabled: options.messages ?? true,
    contractVersion,
    limits,
    policies: options.policies,
    responseStore: store,
    responseCache: resolveResponseCache(options.responseCache),
    usageStore: resolveUsageStore(options.usageStore),
    requestLog: resolveRequestLog(options.requestLog),
    hooks: options.hooks ?? {},
    plugins: resolvePlugins(options.plugins),
    logger: options.logger === false ? silentLogger : (options.logger ?? jsonLogger),
    redactLogs: options.redactLogs !== false,
    accessLog: options.accessLog === true,
    telemetry: resolveTelemetry(options.telemetry),
    metrics: resolveMetrics(options.metrics),
    captureContent: resolveCaptureContent(options.captureContent),
    mcp: options.mcp === undefined ? undefined : checkMcpOptions(options.mcp),
  };
}

function resolveCaptureContent(capture: GatewayOptions['captureContent']): ResolvedOptions['captureContent'] {
  if (!capture) return undefined;
  const maxBytes = (capture === true ? undefined : capture.maxBytes) ?? DEFAULT_CONTENT_BYTES;
  if (!Number.isInteger(maxBytes) || maxBytes < 64) throw new TypeError('options.captureContent.maxBytes must be an integer >= 64');
  return { maxBytes };
}

function resolveMetrics(metrics: GatewayOptions['metrics']): ResolvedOptions['metrics'] {
  if (!metrics) return false;
  const meterProvider = typeof metrics === 'object' ? metrics.meterProvider : undefined;
  if (meterProvider !== undefined && typeof meterProvider?.getMeter !== 'function')
    throw new TypeError('options.metrics.meterProvider must be an OpenTelemetry MeterProvider (with getMeter)');
  return { meterProvider };
}

function resolveUsageStore(store: GatewayOptions['usageStore']): UsageStore | false | undefined {
  if (store === undefined || store === false) return store;
  if (typeof store?.add !== 'function' || typeof store.list !== 'function') throw new TypeError('options.usageStore must be a UsageStore (add, list) or false');
  return store;
}

function resolveRequestLog(sink: GatewayOptions['requestLog']): RequestLogSink | undefined {
  if (sink === undefined) return undefined;
  for (const method of ['write', 'flush', 'close', 'sinkStats'] as const) {
    if (typeof sink?.[method] !== 'function') throw new TypeError(`options.requestLog must be a RequestLogSink (missing ${method}())`);
  }
  return sink;
}

function resolvePlugins(plugins: GatewayOptions['plugins']): readonly GatewayPlugin[] {
  if (plugins === undefined) return [];
  if (!Array.isArray(plugins)) throw new TypeError('options.plugins must be an array of plugins');
  for (const [index, plugin] of plugins.entries()) {
    if (!plugin || typeof plugin !== 'object') throw new TypeError(`options.plugins[${index}] must be an object`);
  }
  return plugins;
}

function resolveTelemetry(telemetry: GatewayOptions['telemetry']): ResolvedOptions['telemetry'] {
  if (!telemetry) return false;
  const tracer = typeof telemetry === 'object' ? telemetry.tracer : undefined;
  if (tracer !== undefined && typeof tracer?.startSpan !== 'function')
    throw new TypeError('options.telemetry.tracer must be an OpenTelemetry Tracer (with startSpan)');
  return { tracer };
}

function resolvePoller(option: GatewayOptions['videoPoller']): Defaulted<VideoPollerOptions> | undefined {
  if (option === undefined || option === false) return undefined;
  if (option !== true && (typeof option !== 'object' || option === null))
    throw new TypeError('options.videoPoller must be a boolean or { intervalMs?, batchSize? }');
  const settings = { intervalMs: 5000, batchSize: 20, ...(option === true ? {} : withoutUndefined(option)) };
  for (const [name, value] of Object.entries(settings)) {
    if (!Number.isInteger(value) || value < 1) throw new TypeError(`options.videoPoller.${name} must be a positive integer`);
  }
  return settings;
}

function resolveKeyStore(keys: GatewayOptions['keys']): KeyStore {
  if (keys === undefined || keys === null) {
    throw new TypeError('options.keys is required: a KeyStore or a list of { key, models?, group?, disabled? }');
  }
  if (Array.isArray(keys)) {
    for (const [index, entry] of (keys as StaticKey[]).entries()) {
      if (!entry || typeof entry.key !== 'string' || entry.key.length === 0) {
        throw new TypeError(`options.keys[${index}].key must be a non-empty string`);
      }
      if (entry.limits !== undefined) checkLimits(entry.limits, `options.keys[${index}].limits`);
      if (entry.budget !== undefined && entry.budget !== false) checkBudget(entry.budget, `options.keys[${index}].budget`);
      if (entry.balance !== undefined && !Number.isFinite(entry.balance)) throw new TypeError(`options.keys[${index}].balance must be a number`);
      if (entry.mcp !== undefined) checkMcpPatterns(entry.mcp, `options.keys[${index}].mcp`);
    }
    return new StaticKeyStore(keys as StaticKey[]);
  }
  if (typeof (keys as KeyStore).lookup !== 'function') {
    throw new TypeError('options.keys must be a KeyStore (with a lookup(key) method) or an array of keys');
  }
  return keys as KeyStore;
}

function normalizeBasePath(path: string): string {
  if (typeof path !== 'string') throw new TypeError('options.basePath must be a string');
  const trimmed = path.replace(/\/+$/, '');
  if (trimmed === '') return '';
  if (!trimmed.startsWith('/')) throw new TypeError(`options.basePath must start with "/", got "${path}"`);
  return trimmed;
}
