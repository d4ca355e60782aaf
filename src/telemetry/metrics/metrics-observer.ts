import type { Attributes, Meter, MeterProvider } from '@opentelemetry/api';
import type { Logger } from '../../logger.js';
import type { DeploymentHealthEntry } from '../../policy/deployment-health.js';
import type { AttemptEvent, RefusalEvent, UsageEvent } from '../../policy/events.js';
import type { GatewayPlugin } from '../../plugins/plugin.js';
import type { ModelEntry } from '../../routing/model.js';
import { errorType, operationName } from '../genai-attributes.js';
import { INFERGATE_VERSION } from '../version.js';
import { createInstruments, type Instruments } from './instruments.js';
import { modelLabeler } from './model-label.js';

const STATES: readonly DeploymentHealthEntry['state'][] = ['healthy', 'degraded', 'open', 'half_open'];

export interface MetricsObserverOptions {
  /** Where the instruments live. Default: the global meter provider of `@opentelemetry/api`. */
  meterProvider?: MeterProvider | undefined;
  /** The configured models, for bounded model labels (see `modelLabeler`). */
  models: Iterable<ModelEntry>;
  /** The provider type behind a configured provider name, for `gen_ai.provider.name`. Default: the name. */
  providerType?: ((providerName: string) => string | undefined) | undefined;
  /** The deployments' health states (`policies.health.snapshot()`), read at each collection. */
  deploymentStates?: (() => readonly DeploymentHealthEntry[]) | undefined;
  /** Told once if `@opentelemetry/api` cannot be loaded. */
  logger: Logger;
}

/**
 * Metrics from the gateway's events, recorded through an `@opentelemetry/api` meter: the usage
 * event (after the answer), each attempt, each refusal and, for the response cache, the answer's
 * `x-infergate-cache` header. Nothing is recorded per stream chunk. Without a meter provider
 * given, `@opentelemetry/api` (an optional peer dependency) is loaded at construction, in the
 * background; built in as a plugin: `metrics: true` adds it.
 */
export function metricsObserver(options: MetricsObserverOptions): GatewayPlugin {
  const providerName = (name: string) => options.providerType?.(name) ?? name;
  const models = modelLabeler(options.models);
  let instruments: Instruments | undefined;
  const ready = meterOf(options).then((meter) => {
    if (!meter) return undefined;
    instruments = createInstruments(meter);
    if (options.deploymentStates) observeStates(instruments, options.deploymentStates, providerName);
    return instruments;
  });
  // Recorded at once when the instruments exist (always, after the first event), else once they do.
  const withInstruments = (record: (instruments: Instruments) => void) => {
    if (instruments) record(instruments);
    else return ready.then((loaded) => loaded && record(loaded));
  };

  return {
    onUsage: (event) => withInstruments((all) => recordUsage(all, event, models(event.model, event.upstreamModel), providerName(event.provider))),
    onAttempt: (event) => withInstruments((all) => recordAttempt(all, event, models(event.model, event.upstreamModel).request, providerName(event.provider))),
    onRefused: (event) => withInstruments((all) => recordRefusal(all, event)),
    onGatewayResponse({ response }) {
      const cache = response.headers.get('x-infergate-cache');
      if (cache === 'hit' || cache === 'miss') return withInstruments((all) => all.cacheLookups.add(1, { 'infergate.cache.result': cache }));
    },
  };
}

function meterOf(options: MetricsObserverOptions): Promise<Meter | undefined> {
  if (options.meterProvider) return Promise.resolve(options.meterProvider.getMeter('infergate', INFERGATE_VERSION));
  return import('@opentelemetry/api').then(
    (api) => api.metrics.getMeter('infergate', INFERGATE_VERSION),
    (error: unknown) => {
      options.logger.warn('metrics are off: @opentelemetry/api could not be loaded (install it, or pass metrics.meterProvider)', {
        message: error instanceof Error ? error.message : String(error),
      });
      return undefined;
    },
  );
}

function recordUsage(instruments: Instruments, event: UsageEvent, model: { request: string; response: string }, provider: string): void {
  const attributes: Attributes = {
    'gen_ai.operation.name': operationName(event.kind),
    'gen_ai.provider.name': provider,
    'gen_ai.request.model': model.request,
    'gen_ai.response.model': model.response,
  };
  const failed = event.status === 'error';
  instruments.requestDuration.record(event.latencyMs / 1000, failed ? { ...attributes, 'error.type': errorType(event.error, event.cancelled) } : attributes);
  if (event.overheadMs !== undefined) instruments.overhead.record(event.overheadMs / 1000, attributes);
  // A cache hit used no upstream tokens and spent nothing.
  if (!event.cached) {
    const { input, output } = event.usage;
    if (input !== undefined) instruments.tokenUsage.record(input, { ...attributes, 'gen_ai.token.type': 'input' });
    if (output !== undefined) instruments.tokenUsage.record(output, { ...attributes, 'gen_ai.token.type': 'output' });
    if (event.costUsd > 0) instruments.cost.add(event.costUsd, { ...attributes, 'infergate.price_source': event.priceSource });
  }
  if (failed || event.ttftMs === undefined || !event.stream) return;
  instruments.timeToFirstToken.record(event.ttftMs / 1000, attributes);
  const output = event.usage.output;
  if (output !== undefined && output > 1) instruments.timePerOutputToken.record((event.latencyMs - event.ttftMs) / 1000 / (output - 1), attributes);
}

function recordAttempt(instruments: Instruments, event: AttemptEvent, model: string, provider: string): void {
  const attributes: Attributes = {
    'gen_ai.provider.name': provider,
    'gen_ai.request.model': model,
    'infergate.attempt.outcome': event.status,
  };
  if (event.status === 'error') attributes['error.type'] = errorType(event.error);
  instruments.attempts.add(1, attributes);
  if (event.willRetry) instruments.fallbacks.add(1, { 'gen_ai.provider.name': provider, 'gen_ai.request.model': model, 'error.type': errorType(event.error) });
}

function recordRefusal(instruments: Instruments, event: RefusalEvent): void {
  instruments.refusals.add(1, {
    'infergate.refusal.reason': event.reason,
    'error.type': event.code ?? String(event.status),
    'http.response.status_code': event.status,
  });
}

/** Each deployment as four series, 1 for its state and 0 for the others, so a query can sum or alert on any state. */
function observeStates(instruments: Instruments, states: () => readonly DeploymentHealthEntry[], providerName: (name: string) => string): void {
  instruments.deploymentState.addCallback((result) => {
    for (const { deployment, provider, state } of states()) {
      for (const candidate of STATES) {
        result.observe(candidate === state ? 1 : 0, {
          'infergate.deployment': deployment,
          'gen_ai.provider.name': providerName(provider),
          'infergate.deployment.state': candidate,
        });
      }
    }
  });
}
