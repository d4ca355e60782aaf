import type { Meter, MeterProvider, ObservableResult } from '@opentelemetry/api';
import type { GuardrailOutcome } from '../../guardrails/checker.js';
import type { Logger } from '../../logger.js';
import type { McpToolCallEvent } from '../../mcp/tool-call-event.js';
import type { DeploymentHealthEntry } from '../../policy/deployment-health.js';
import type { AttemptEvent, RefusalEvent, UsageEvent } from '../../policy/events.js';
import type { GatewayPlugin } from '../../plugins/plugin.js';
import type { ModelEntry } from '../../routing/model.js';
import { errorType, operationName } from '../genai-attributes.js';
import { fullToolName, toolCallErrorType } from '../mcp-attributes.js';
import { INFERGATE_VERSION } from '../version.js';
import { createInstruments, type Instruments } from './instruments.js';
import { type LabelSet, LabelSets } from './label-sets.js';
import { modelLabeler, type ModelLabels } from './model-label.js';
import { ToolLabeler } from './tool-label.js';

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
  /** Whether a deployment id is a configured one (not made by a wildcard entry for a client's name). Default: all are. */
  listedDeployment?: ((deployment: string) => boolean) | undefined;
  /** Told once if `@opentelemetry/api` cannot be loaded. */
  logger: Logger;
}

/**
 * Metrics from the gateway's events, recorded through an `@opentelemetry/api` meter: the usage
 * event (after the answer), each attempt, each refusal, each MCP tool call and, for the response cache, the answer's
 * `x-infergate-cache` header. Nothing is recorded per stream chunk. Without a meter provider
 * given, `@opentelemetry/api` (an optional peer dependency) is loaded at construction, in the
 * background; built in as a plugin: `metrics: true` adds it.
 */
export function metricsObserver(options: MetricsObserverOptions): GatewayPlugin {
  const providerName = (name: string) => options.providerType?.(name) ?? name;
  const recorder = new Recorder(modelLabeler(options.models), providerName);
  let instruments: Instruments | undefined;
  const ready = meterOf(options).then((meter) => {
    if (!meter) return undefined;
    instruments = createInstruments(meter);
    if (options.deploymentStates) observeStates(instruments, options.deploymentStates, providerName, options.listedDeployment ?? (() => true));
    return instruments;
  });
  // Recorded at once when the instruments exist (always, after the first event), else once they do.
  const withInstruments = (record: (instruments: Instruments) => void) => {
    if (instruments) record(instruments);
    else return ready.then((loaded) => loaded && record(loaded));
  };

  return {
    onUsage: (event) => withInstruments((all) => recorder.usage(all, event)),
    onAttempt: (event) => withInstruments((all) => recorder.attempt(all, event)),
    onRefused: (event) => withInstruments((all) => recorder.refusal(all, event)),
    onToolCall: (event) => withInstruments((all) => recorder.toolCall(all, event)),
    onGatewayResponse({ response }) {
      const cache = response.headers.get('x-infergate-cache');
      if (cache === 'hit' || cache === 'miss') return withInstruments((all) => recorder.cacheLookup(all, cache));
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

/**
 * Records each event with label sets made once per combination (`LabelSets`): per request, a
 * few histogram records and counter additions, and no attribute object built.
 */
class Recorder {
  private readonly labels = new LabelSets();
  /** Each request's label sets by its raw ids, found with no string built (bounded: past it, `labels` alone). */
  private readonly requests = new NestedCache<RequestLabels>();
  private readonly okAttempts = new NestedCache<LabelSet>();
  private readonly tools = new ToolLabeler();

  constructor(
    private readonly models: (model: string, upstreamModel: string) => ModelLabels,
    private readonly providerName: (name: string) => string,
  ) {}

  usage(instruments: Instruments, event: UsageEvent): void {
    const labels = this.requests.get(event.kind, event.provider, event.model, event.upstreamModel, () => this.requestLabels(event));
    const { base } = labels;
    const failed = event.status === 'error';
    const durationLabels = failed ? this.variant(base, 'error.type', errorType(event.error, event.cancelled)) : base;
    instruments.requestDuration.record(event.latencyMs / 1000, durationLabels.attributes);
    if (event.overheadMs !== undefined) instruments.overhead.record(event.overheadMs / 1000, base.attributes);
    // A cache hit used no upstream tokens and spent nothing.
    if (!event.cached) {
      const { input, output } = event.usage;
      if (input !== undefined) instruments.tokenUsage.record(input, labels.input.attributes);
      if (output !== undefined) instruments.tokenUsage.record(output, labels.output.attributes);
      if (event.costUsd > 0) instruments.cost.add(event.costUsd, labels.priced(event.priceSource));
    }
    if (event.guardrails) this.guardrails(instruments, event.guardrails);
    if (failed || event.ttftMs === undefined || !event.stream) return;
    instruments.timeToFirstToken.record(event.ttftMs / 1000, base.attributes);
    const output = event.usage.output;
    if (output !== undefined && output > 1) instruments.timePerOutputToken.record((event.latencyMs - event.ttftMs) / 1000 / (output - 1), base.attributes);
  }

  attempt(instruments: Instruments, event: AttemptEvent): void {
    if (event.status === 'ok') {
      instruments.attempts.add(
        1,
        this.okAttempts.get('ok', event.provider, event.model, event.upstreamModel, () => this.attemptLabels(event)),
      );
      return;
    }
    const outcome = this.attemptLabels(event);
    instruments.attempts.add(1, outcome);
    if (!event.willRetry) return;
    // Failures are rare: their labels are looked up by key.
    const provider = this.providerName(event.provider);
    const model = this.models(event.model, event.upstreamModel).request;
    const type = errorType(event.error);
    const fallback = this.labels.of(`fallback\0${provider}\0${model}\0${type}`, () => ({
      'gen_ai.provider.name': provider,
      'gen_ai.request.model': model,
      'error.type': type,
    }));
    instruments.fallbacks.add(1, fallback);
  }

  private attemptLabels(event: AttemptEvent): LabelSet {
    const provider = this.providerName(event.provider);
    const model = this.models(event.model, event.upstreamModel).request;
    const error = event.status === 'error' ? errorType(event.error) : undefined;
    return this.labels.of(`attempt\0${provider}\0${model}\0${event.status}\0${error}`, () => ({
      'gen_ai.provider.name': provider,
      'gen_ai.request.model': model,
      'infergate.attempt.outcome': event.status,
      ...(error !== undefined ? { 'error.type': error } : {}),
    }));
  }

  /** Guardrail names come from the configuration, phases and outcomes are enums: bounded labels. */
  private guardrails(instruments: Instruments, outcomes: readonly GuardrailOutcome[]): void {
    for (const { guardrail, phase, outcome, durationMs } of outcomes) {
      const checked = this.labels.of(`guardrail\0${guardrail}\0${phase}`, () => ({
        'infergate.guardrail.name': guardrail,
        'infergate.guardrail.phase': phase,
      }));
      instruments.guardrailChecks.add(1, this.variant(checked, 'infergate.guardrail.outcome', outcome));
      instruments.guardrailDuration.record(durationMs / 1000, checked.attributes);
    }
  }

  refusal(instruments: Instruments, event: RefusalEvent): void {
    const type = event.code ?? String(event.status);
    const set = this.labels.of(`refusal\0${event.reason}\0${type}\0${event.status}`, () => ({
      'infergate.refusal.reason': event.reason,
      'error.type': type,
      'http.response.status_code': event.status,
    }));
    instruments.refusals.add(1, set);
  }

  /** A call by bounded server, tool and outcome; its duration by the MCP conventions' attributes. */
  toolCall(instruments: Instruments, event: McpToolCallEvent): void {
    const { server, tool } = this.tools.of(event);
    const called = this.labels.of(`tool\0${server}\0${tool}`, () => ({ 'infergate.mcp.server': server, 'infergate.mcp.tool': tool }));
    instruments.mcpToolCalls.add(1, this.variant(called, 'infergate.mcp.outcome', event.outcome));
    const name = tool === '_OTHER' ? '_OTHER' : fullToolName({ server, tool });
    const error = toolCallErrorType(event.outcome);
    const timed = this.labels.of(`mcp\0${name}\0${error}`, () => ({
      'mcp.method.name': 'tools/call',
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': name,
      ...(error ? { 'error.type': error } : {}),
    }));
    instruments.mcpOperationDuration.record(event.durationMs / 1000, timed.attributes);
  }

  cacheLookup(instruments: Instruments, result: 'hit' | 'miss'): void {
    instruments.cacheLookups.add(
      1,
      this.labels.of(`cache\0${result}`, () => ({ 'infergate.cache.result': result })),
    );
  }

  /** Operation, provider, request and response model of a request, and the variants every request uses. */
  private requestLabels(event: UsageEvent): RequestLabels {
    const operation = operationName(event.kind);
    const provider = this.providerName(event.provider);
    const { request, response } = this.models(event.model, event.upstreamModel);
    const base = this.labels.of(`request\0${operation}\0${provider}\0${request}\0${response}`, () => ({
      'gen_ai.operation.name': operation,
      'gen_ai.provider.name': provider,
      'gen_ai.request.model': request,
      'gen_ai.response.model': response,
    }));
    const prices = new Map<string, LabelSet>();
    return {
      base,
      input: this.variant(base, 'gen_ai.token.type', 'input'),
      output: this.variant(base, 'gen_ai.token.type', 'output'),
      priced: (source) => {
        let set = prices.get(source);
        if (!set) prices.set(source, (set = this.variant(base, 'infergate.price_source', source)));
        return set;
      },
    };
  }

  /** `base` with one more attribute. */
  private variant(base: LabelSet, name: string, value: string): LabelSet {
    return this.labels.of(`${base.key}\0${name}\0${value}`, () => ({ ...base.attributes, [name]: value }));
  }
}

/** The label sets of one kind of request, reused for each. */
interface RequestLabels {
  base: LabelSet;
  input: LabelSet;
  output: LabelSet;
  priced(source: string): LabelSet;
}

/** Entries kept at most in a `NestedCache`: past it, values are made each time (and bounded by `LabelSets`). */
const NESTED_MAX = 2000;

/** Values by four keys in nested maps: a lookup builds no string. */
class NestedCache<T> {
  private readonly root = new Map<string, Map<string, Map<string, Map<string, T>>>>();
  private size = 0;

  get(a: string, b: string, c: string, d: string, make: () => T): T {
    const level1 = this.root.get(a) ?? this.add(this.root, a, new Map());
    const level2 = level1.get(b) ?? this.add(level1, b, new Map());
    const level3 = level2.get(c) ?? this.add(level2, c, new Map());
    const found = level3.get(d);
    if (found !== undefined) return found;
    const value = make();
    if (this.size < NESTED_MAX) {
      this.size++;
      level3.set(d, value);
    }
    return value;
  }

  private add<V>(map: Map<string, V>, key: string, value: V): V {
    // Empty levels past the bound are not kept either.
    if (this.size < NESTED_MAX) map.set(key, value);
    return value;
  }
}

/**
 * Each listed deployment as four series, 1 for its state and 0 for the others, so a query can sum
 * or alert on any state. Deployments a wildcard entry made for the names clients sent are not
 * listed (clients choose those names): they are counted per provider and state under
 * `infergate.deployment="_OTHER"`.
 */
function observeStates(
  instruments: Instruments,
  states: () => readonly DeploymentHealthEntry[],
  providerName: (name: string) => string,
  listed: (deployment: string) => boolean,
): void {
  instruments.deploymentState.addCallback((result) => {
    const others = new Map<string, Record<DeploymentHealthEntry['state'], number>>();
    for (const { deployment, provider, state } of states()) {
      if (!listed(deployment)) {
        const counts = others.get(provider) ?? { healthy: 0, degraded: 0, open: 0, half_open: 0 };
        counts[state]++;
        others.set(provider, counts);
        continue;
      }
      for (const candidate of STATES) observeState(result, candidate === state ? 1 : 0, deployment, providerName(provider), candidate);
    }
    for (const [provider, counts] of others) {
      for (const candidate of STATES) observeState(result, counts[candidate], '_OTHER', providerName(provider), candidate);
    }
  });
}

function observeState(result: ObservableResult, value: number, deployment: string, provider: string, state: DeploymentHealthEntry['state']): void {
  result.observe(value, { 'infergate.deployment': deployment, 'gen_ai.provider.name': provider, 'infergate.deployment.state': state });
}
