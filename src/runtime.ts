import { createMcpGateway, type McpGateway } from './mcp/mcp-session.js';
import type { KeyStore } from './auth/key-store.js';
import type { Logger } from './logger.js';
import type { Defaulted } from './optional.js';
import type { ResolvedOptions, GatewayLimits, VideoPollerOptions } from './options.js';
import { hooksPlugin } from './plugins/hooks-plugin.js';
import { guardrailPlugin } from './guardrails/guardrail-stage.js';
import { guardrailSelector } from './guardrails/guardrail-selection.js';
import type { GatewayPlugin } from './plugins/plugin.js';
import { usageRecorder } from './plugins/usage-recorder.js';
import { requestLogRecorder } from './plugins/request-log-recorder.js';
import { resolvePolicies, type ResolvedPolicies } from './policy/policy-options.js';
import { checkModelPrices } from './pricing/model-price.js';
import { Pricing } from './pricing/pricing.js';
import type { Provider } from './providers/provider.js';
import { ModelCatalog } from './routing/catalog.js';
import { MemoryResponseStore } from './state/memory-response-store.js';
import { ResponseCache } from './cache/response-cache.js';
import type { ResponseStore } from './state/response-store.js';
import { MemoryUsageStore, type UsageStore } from './state/usage-store.js';
import { MemoryTaskStore, type TaskStore } from './tasks/task-store.js';
import { VideoTasks } from './tasks/video-tasks.js';
import { accessLogObserver } from './telemetry/access-log.js';
import { openTelemetryObserver, type OpenTelemetryObserverOptions } from './telemetry/otel-observer.js';
import { isWildcardId } from './routing/wildcard.js';
import { metricsObserver, type MetricsObserverOptions } from './telemetry/metrics/metrics-observer.js';
import { redactingLogger } from './telemetry/redacting-logger.js';

/** What the gateway runs on: the services built from its resolved options. */
export interface GatewayRuntime {
  keyStore: KeyStore;
  providers: Record<string, Provider>;
  catalog: ModelCatalog;
  taskStore: TaskStore;
  /** The video task lifecycle over `taskStore`. */
  videoTasks: VideoTasks;
  /** The background poller's settings, or undefined when it is off. */
  videoPoller: Defaulted<VideoPollerOptions> | undefined;
  basePath: string;
  messagesEnabled: boolean;
  contractVersion: string;
  limits: Defaulted<GatewayLimits>;
  /** Limits with their engine, retries and deployment health. */
  policies: ResolvedPolicies;
  /** Set when some model accepts `previous_response_id`. */
  responseStore: ResponseStore | undefined;
  /** The response cache, when `responseCache` is set. */
  responseCache: ResponseCache | undefined;
  /**
   * Every stage's plugins, in order: the hooks, the guardrails, the caller's plugins, OpenTelemetry, the access
   * log. whatwg-node's own stages of the caller's plugins run in `createServerAdapter`.
   */
  plugins: readonly GatewayPlugin[];
  /** Closes what the guardrails hold open (the pool of remote checkers); `dispose` calls it. */
  closeGuardrails(): Promise<void>;
  logger: Logger;
  /** Dollars of each usage event: the model's `price`, else the catalog's. */
  pricing: Pricing;
  /** Each key's usage by day and model (`GET /v1/usage`); undefined with `usageStore: false`. */
  usageStore: UsageStore | undefined;
  /** Measure each request's overhead (`x-infergate-overhead-ms`, the `infergate.overhead` metric): with metrics on. */
  timesRequests: boolean;
  /** Each captured text's cap, when prompts and answers go in usage events (`captureContent`). */
  captureContent: { maxBytes: number } | undefined;
  /** The MCP gateway's servers, upstream clients and session store, when `mcp` is configured. */
  mcp: McpGateway | undefined;
}

/** Builds the catalog, stores, policies, plugins and logger; throws a `TypeError` naming a bad model or policy. */
export function createRuntime(options: ResolvedOptions): GatewayRuntime {
  const { providers, limits } = options;
  const catalog = new ModelCatalog(options.models, Object.keys(providers));
  const taskStore = options.taskStore ?? new MemoryTaskStore();
  const logger = redactingLogger(options.logger, { redact: options.redactLogs });
  checkModelPrices(options.models);
  const usageStore = options.usageStore === false ? undefined : (options.usageStore ?? new MemoryUsageStore());
  const policies = resolvePolicies(options.policies, logger);
  const guardrails = guardrailSelector(options.policies, catalog.entries(), providers, logger);
  return {
    closeGuardrails: guardrails.close,
    keyStore: options.keyStore,
    providers,
    catalog,
    taskStore,
    videoTasks: new VideoTasks({
      store: taskStore,
      providers,
      catalog,
      logger,
      refreshIntervalMs: options.videoRefreshIntervalMs,
      idleTimeoutMs: limits.streamIdleTimeoutMs,
    }),
    videoPoller: options.videoPoller,
    basePath: options.basePath,
    messagesEnabled: options.messagesEnabled,
    contractVersion: options.contractVersion,
    limits,
    policies,
    responseStore: options.responseStore ?? defaultResponseStore(catalog, providers),
    responseCache: options.responseCache ? new ResponseCache(options.responseCache, logger) : undefined,
    plugins: [
      hooksPlugin(options.hooks),
      guardrailPlugin(guardrails, logger),
      ...options.plugins,
      ...telemetryPlugins(options.telemetry, logger, providers),
      ...(options.metrics ? [metricsPlugin(options.metrics, logger, providers, catalog, policies)] : []),
      ...(options.accessLog ? [accessLogObserver(logger)] : []),
      ...(usageStore ? [usageRecorder(usageStore)] : []),
      ...(options.requestLog ? [requestLogRecorder(options.requestLog)] : []),
    ],
    logger,
    pricing: new Pricing({
      configuredPrice: (id) => catalog.get(id)?.price,
      providerType: (name) => providers[name]?.type,
      catalogIds: (name, upstreamModel) => providers[name]?.catalogIds?.(upstreamModel) ?? [upstreamModel],
      logger,
    }),
    usageStore,
    timesRequests: options.metrics !== false,
    captureContent: options.captureContent,
    mcp: options.mcp ? createMcpGateway(options.mcp, logger) : undefined,
  };
}

/** In memory, when some model or upstream needs a response store and none was given. */
function defaultResponseStore(catalog: ModelCatalog, providers: Record<string, Provider>): ResponseStore | undefined {
  for (const entry of catalog.entries()) if (entry.previousResponseId) return new MemoryResponseStore();
  // Responses upstreams keep what they answer; the store remembers which key owns each id.
  for (const provider of Object.values(providers)) if (provider.text?.storedResponse) return new MemoryResponseStore();
  return undefined;
}

function telemetryPlugins(telemetry: ResolvedOptions['telemetry'], logger: Logger, providers: Record<string, Provider>): GatewayPlugin[] {
  if (!telemetry) return [];
  const settings: OpenTelemetryObserverOptions = { logger, providerType: (name) => providers[name]?.type };
  if (telemetry.tracer) settings.tracer = telemetry.tracer as unknown as NonNullable<OpenTelemetryObserverOptions['tracer']>;
  return [openTelemetryObserver(settings)];
}

function metricsPlugin(
  metrics: Exclude<ResolvedOptions['metrics'], false>,
  logger: Logger,
  providers: Record<string, Provider>,
  catalog: ModelCatalog,
  policies: ResolvedPolicies,
): GatewayPlugin {
  return metricsObserver({
    meterProvider: metrics.meterProvider as MetricsObserverOptions['meterProvider'],
    models: catalog.entries(),
    providerType: (name) => providers[name]?.type,
    deploymentStates: () => policies.health.snapshot(),
    listedDeployment: listedDeployments(catalog),
    logger,
  });
}

/** Whether a deployment id belongs to a listed model (a wildcard entry's are made from clients' names). */
function listedDeployments(catalog: ModelCatalog): (deployment: string) => boolean {
  const ids = new Set<string>();
  for (const entry of catalog.entries()) {
    if (!isWildcardId(entry.id)) for (const deployment of catalog.deployments(entry)) ids.add(deployment.id);
  }
  return (deployment) => ids.has(deployment);
}
