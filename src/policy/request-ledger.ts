import { isGatewayError, toPublicError } from '../errors.js';
import { mergeOutcomes } from '../guardrails/outcome.js';
import type { GuardrailOutcome } from '../guardrails/checker.js';
import type { RouteContext } from '../http/route.js';
import type { IRUsage } from '../protocols/ir.js';
import type { ModelEntry, ModelKind } from '../routing/model.js';
import type { Deployment, RouteReason, RoutePlan } from '../routing/deployments.js';
import { ROUTE_HEADER, routeHeaderValue } from '../routing/route-headers.js';
import type { InFlightLease } from './deployment-health.js';
import type { Admission } from './limit-engine.js';
import type { AttemptEvent, EventError, UsageEvent } from './events.js';
import type { AttemptOutcome } from './fallback.js';
import type { ContentCapture } from '../logs/content-capture.js';
import { runObserver } from '../plugins/run-observer.js';

export interface LedgerEnd {
  usage?: IRUsage | undefined;
  status: 'ok' | 'error';
  /** What failed, for an `error` end. */
  error?: unknown;
  /** The status the client got; default 200 for `ok`, the error's status otherwise. */
  httpStatus?: number | undefined;
  cancelled?: boolean | undefined;
  finishReason?: string | undefined;
  responseId?: string | undefined;
  /** The ids of the answer's output items (a Responses passthrough answer), told with its id. */
  outputItemIds?: string[] | undefined;
  units?: UsageEvent['units'] | undefined;
  /** A JSON answer's body as the client gets it, for the captured content (`captureContent`). */
  answerText?: string | undefined;
}

/** Told the answer's id; a promise it returns is a write the answer waits for (`identifiedWrites`). */
type IdentifiedListener = (responseId: string, outputItemIds: readonly string[]) => Promise<void> | void;

/**
 * The account of one admitted request, from admission to its end: which deployments were
 * tried, when the first byte left, and what it used. `finish` runs once, whatever ends the
 * request first (answer sent, stream failed, client left), and settles everything: the limit
 * counters and slot, the key store's charge, and the plugins' attempt and usage stages (hooks, telemetry, access log).
 */
export class RequestLedger {
  readonly startedAt = Date.now();
  private deployment: Deployment;
  private attempts = 0;
  private attemptStartedAt = 0;
  /** The last attempt the observers were told about. */
  private reportedAttempt = 0;
  private firstByteAt: number | undefined;
  private finished = false;
  private responseId: string | undefined;
  private outputItemIds: readonly string[] = [];
  private readonly identifiedListeners: IdentifiedListener[] = [];
  private pendingWrites: Promise<void> | undefined;
  /** Answered from the response cache: no upstream call, nothing spent. */
  private servedFromCache = false;
  private readonly finishedListeners: ((end: LedgerEnd) => void)[] = [];
  private end: LedgerEnd | undefined;
  /** The current attempt's count in its deployment's in-flight load, released once whatever ends it. */
  private inFlight: InFlightLease | undefined;
  /** The plan's order, first deployment and why it was chosen, for `x-infergate-route`. */
  private route: (Pick<RoutePlan, 'order' | 'reason'> & { first: string }) | undefined;
  /** The request's prompt and answer, kept for the usage event when `captureContent` is on. */
  content: ContentCapture | undefined;
  /** The guardrails' outcomes, one per guardrail and phase (a stream's windows merged). */
  private guardrails: GuardrailOutcome[] | undefined;

  constructor(
    private readonly context: RouteContext,
    readonly model: ModelEntry,
    readonly endpoint: string,
    readonly kind: ModelKind,
    readonly stream: boolean,
    private readonly admission: Admission,
  ) {
    this.deployment = context.options.catalog.deployments(model)[0]!;
  }

  get requestId(): string {
    return this.context.requestId;
  }

  /** The deployment of the current attempt: once the request is answered, the one that answered it. */
  get answeredBy(): Deployment {
    return this.deployment;
  }

  /**
   * Headers every answer to this request carries (`x-ratelimit-*`, `x-infergate-budget-*`), and
   * `x-infergate-route` once an upstream was tried.
   */
  get headers(): Record<string, string> {
    if (!this.route || this.attempts === 0 || this.servedFromCache) return this.admission.headers;
    const route = routeHeaderValue({ deployment: this.deployment.id, reason: this.routeReason!, order: this.route.order, attempts: this.attempts });
    return { ...this.admission.headers, [ROUTE_HEADER]: route };
  }

  /** Why the current deployment was picked (`fallback` once an earlier one failed); unset before any attempt. */
  private get routeReason(): RouteReason | 'fallback' | undefined {
    if (!this.route || this.attempts === 0 || this.servedFromCache) return undefined;
    return this.deployment.id === this.route.first ? this.route.reason : 'fallback';
  }

  /** The deployments' plan the attempts follow. */
  routed(plan: RoutePlan): void {
    this.route = { order: plan.order, reason: plan.reason, first: plan.plan[0]!.id };
  }

  /** An attempt starts on this deployment: what the usage event names if the request ends during it. */
  trying(deployment: Deployment, attempt: number): void {
    this.inFlight?.release();
    this.inFlight = this.context.options.policies.health.begin(deployment);
    this.deployment = deployment;
    this.attempts = attempt;
    this.attemptStartedAt = Date.now();
    this.context.timing?.callingUpstream();
  }

  /** Records an upstream attempt's outcome and tells the plugins (once per attempt). */
  attempted(outcome: AttemptOutcome): void {
    if (outcome.error && outcome.attempt === this.attempts) this.inFlight?.release();
    if (outcome.attempt <= this.reportedAttempt) return;
    this.reportedAttempt = outcome.attempt;
    // The back-off before the next attempt is waited out for the upstream, not the gateway's time.
    if (outcome.delayMs) this.context.timing?.waited(outcome.delayMs);
    const { plugins, logger } = this.context.options;
    // A failure's operator-only detail: the request's own failure logs it, a retried attempt here.
    if (outcome.willRetry && outcome.error?.detail !== undefined) {
      logger.warn('upstream attempt failed', { requestId: this.context.requestId, deployment: outcome.deployment.id, detail: outcome.error.detail });
    }
    if (!plugins.some((plugin) => plugin.onAttempt)) return;
    const event: AttemptEvent = {
      requestId: this.context.requestId,
      keyId: this.context.key.id,
      model: this.model.id,
      deployment: outcome.deployment.id,
      provider: outcome.deployment.provider,
      upstreamModel: outcome.deployment.upstreamModel,
      attempt: outcome.attempt,
      status: outcome.error ? 'error' : 'ok',
      ...(outcome.error ? { error: eventError(outcome.error) } : {}),
      willRetry: outcome.willRetry,
      ...(outcome.delayMs !== undefined ? { delayMs: outcome.delayMs } : {}),
      startedAt: outcome.startedAt,
      latencyMs: Date.now() - outcome.startedAt,
    };
    for (const plugin of plugins) {
      if (plugin.onAttempt) void runObserver(logger, 'onAttempt observer', event.requestId, () => plugin.onAttempt!(event));
    }
  }

  /**
   * The answer's id is known (a passthrough JSON body, or a stream's terminal event as it is
   * read), with the ids of its output items where the protocol has them.
   */
  identified(responseId: string, outputItemIds: readonly string[] = []): void {
    if (this.responseId !== undefined) return;
    this.responseId = responseId;
    this.outputItemIds = outputItemIds;
    const writes: Promise<void>[] = [];
    for (const listener of this.identifiedListeners) {
      const written = listener(responseId, outputItemIds);
      if (written) writes.push(written);
    }
    if (writes.length > 0) this.pendingWrites = Promise.all(writes).then(() => undefined);
  }

  /**
   * Calls `listener` with the answer's id and output item ids: now if they are known (its write
   * returned, for the caller to wait for), else once they are (its write then held by
   * `identifiedWrites`).
   */
  whenIdentified(listener: IdentifiedListener): Promise<void> | undefined {
    if (this.responseId !== undefined) return listener(this.responseId, this.outputItemIds) ?? undefined;
    this.identifiedListeners.push(listener);
    return undefined;
  }

  /**
   * The writes the listeners started when the answer's id became known, once: a stream holds the
   * frame that told the id until they are done, so the client's next request (on any instance
   * sharing the store) finds them.
   */
  identifiedWrites(): Promise<void> | undefined {
    const writes = this.pendingWrites;
    this.pendingWrites = undefined;
    return writes;
  }

  /**
   * The answer comes from the response cache: the usage event says `cached: true`, costs 0 by
   * default (`policies.cost` sees the flag) and $0, counts no attempts and no tokens per minute.
   */
  markCached(): void {
    this.servedFromCache = true;
  }

  /** Calls `listener` with how the request ended: now if it has, else once it does (the response cache stores on it). */
  whenFinished(listener: (end: LedgerEnd) => void): void {
    if (this.end) listener(this.end);
    else this.finishedListeners.push(listener);
  }

  /** A guardrail's outcome; a later one of the same guardrail and phase (a stream's next window) is merged into it. */
  guardrailChecked(outcome: GuardrailOutcome): void {
    const outcomes = (this.guardrails ??= []);
    const index = outcomes.findIndex((known) => known.guardrail === outcome.guardrail && known.phase === outcome.phase);
    if (index === -1) outcomes.push(outcome);
    else outcomes[index] = mergeOutcomes(outcomes[index]!, outcome);
  }

  /** The first byte of a streamed answer left (time to first token). */
  firstByte(): void {
    this.firstByteAt ??= Date.now();
  }

  finish(end: LedgerEnd): void {
    this.inFlight?.release();
    if (this.finished) return;
    this.finished = true;
    if (end.status === 'ok' && end.responseId) this.identified(end.responseId, end.outputItemIds);
    // An answer completed inside its attempt (a whole JSON body): the attempt succeeded, and
    // observers hear of it before the request's end, as they expect.
    if (this.attempts > this.reportedAttempt && end.status === 'ok') {
      this.attempted({ deployment: this.deployment, attempt: this.attempts, startedAt: this.attemptStartedAt, willRetry: false });
    }
    const { options, key, requestId, request } = this.context;
    const { raw, ...usage } = end.usage ?? {};
    const error = end.error === undefined ? undefined : toPublicError(end.error);
    const base: Omit<UsageEvent, 'cost'> = {
      requestId,
      keyId: key.id,
      keyGroup: key.group ?? 'default',
      endpoint: this.endpoint,
      kind: this.kind,
      stream: this.stream,
      model: this.model.id,
      deployment: this.deployment.id,
      provider: this.deployment.provider,
      upstreamModel: this.deployment.upstreamModel,
      usage,
      ...(raw ? { rawUsage: raw } : {}),
      ...(end.units ? { units: end.units } : {}),
      status: end.status,
      httpStatus: end.httpStatus ?? (end.status === 'ok' || !error ? 200 : error.status),
      ...(error ? { error: eventError(error) } : {}),
      ...(end.cancelled ? { cancelled: true } : {}),
      ...(end.finishReason ? { finishReason: end.finishReason } : {}),
      ...(end.responseId || this.responseId ? { responseId: end.responseId ?? this.responseId } : {}),
      attempts: this.servedFromCache ? 0 : Math.max(1, this.attempts),
      ...(this.routeReason ? { routeReason: this.routeReason } : {}),
      startedAt: this.startedAt,
      latencyMs: Date.now() - this.startedAt,
      ...(this.firstByteAt !== undefined ? { ttftMs: this.firstByteAt - this.startedAt } : {}),
      ...overheadOf(this.context),
      ...options.pricing.costOf({
        model: this.model.id,
        provider: this.deployment.provider,
        upstreamModel: this.deployment.upstreamModel,
        usage,
        units: end.units,
      }),
      // A cache hit spent nothing upstream: $0 whatever the price (the usage is the original call's).
      ...(this.servedFromCache ? { cached: true, costUsd: 0 } : {}),
      ...(this.content ? { content: this.content.content(end.answerText) } : {}),
      ...(this.guardrails ? { guardrails: this.guardrails } : {}),
    };
    let cost = 0;
    try {
      cost = options.policies.cost(base);
    } catch (failure) {
      options.logger.error('policies.cost failed', { requestId, message: String(failure) });
    }
    const event: UsageEvent = { ...base, cost };
    const settle = (what: string, work: () => unknown) => runObserver(options.logger, what, requestId, work);

    if (this.admission.counted) {
      // A cache hit counts as a request, not as tokens: the upstream saw none.
      const tokens = this.servedFromCache ? 0 : (usage.input ?? 0) + (usage.output ?? 0);
      void settle('limit settlement', () =>
        options.policies.limitEngine.settle(
          key.id,
          this.admission.limits,
          // Dollars go to the key's and group's budgets; a cut stream's are what it produced.
          { slot: this.admission.slot, tokens, cost, usd: event.costUsd, budgets: this.admission.budgets },
          Date.now(),
        ),
      );
    }
    if (options.keyStore.charge && cost > 0) void settle('keyStore.charge', () => options.keyStore.charge!(key, event));
    for (const plugin of options.plugins) {
      if (plugin.onUsage) void settle('onUsage observer', () => plugin.onUsage!(event, request));
    }
    this.end = end;
    for (const listener of this.finishedListeners) listener(end);
  }
}

function eventError(error: unknown): EventError {
  const publicError = isGatewayError(error) ? error : toPublicError(error);
  return { status: publicError.status, code: publicError.code, message: publicError.message };
}

/** The gateway's overhead when it is measured (metrics on) and known; frozen now if the answer was not sent yet. */
function overheadOf(context: RouteContext): { overheadMs?: number } {
  const overheadMs = context.timing?.answered();
  return overheadMs === undefined ? {} : { overheadMs };
}
