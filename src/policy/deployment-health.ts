import { randomUUID } from 'node:crypto';
import { setBounded } from '../bounded-map.js';
import type { Logger } from '../logger.js';
import type { Deployment } from '../routing/deployments.js';
import { PeakEwma } from '../routing/peak-ewma.js';
import { CircuitBreaker, type BreakerSettings, type BreakerState, type BreakerTransition } from './circuit-breaker.js';
import type { HealthBus, HealthNotice } from './health-bus.js';

/**
 * Deployments remembered at most: a wildcard entry's deployment ids hold the client's model
 * name, so they must not grow without end.
 */
const DEPLOYMENTS_MAX = 10_000;

/**
 * The load of a deployment whose latency is not known yet but which has requests in flight
 * (Finagle's penalty): a new deployment gets one request at a time until it has answered once,
 * rather than a whole burst.
 */
const UNKNOWN_BUSY_PENALTY = 1e9;

/** A half-open deployment's score: below every other, so its probe goes first. */
const HALF_OPEN_SCORE = -1;

export interface HealthSettings extends BreakerSettings {
  /** Time constant of the peak-EWMA of time to first byte, in ms. */
  latencyDecayMs: number;
  /** Shares open breakers and 429 backoffs with other instances. */
  bus?: HealthBus | undefined;
  /** This instance's id on the bus. */
  instanceId?: string | undefined;
  logger?: Logger | undefined;
}

/** One entry of `DeploymentHealth.snapshot()`. */
export interface DeploymentHealthEntry {
  deployment: string;
  provider: string;
  state: BreakerState;
}

/** An attempt's hold on its deployment: counted in flight until `release` (idempotent). */
export interface InFlightLease {
  release(): void;
}

interface Tracked {
  provider: string | undefined;
  breaker: CircuitBreaker;
  latency: PeakEwma;
  inFlight: number;
}

/**
 * What this instance knows of each deployment's health: a circuit breaker driven by live
 * traffic, a peak-EWMA of time to first byte, and the requests in flight. Latency and load
 * are this process's own (what it sees of the upstream from where it runs); breaker openings,
 * 429 backoffs and closings are shared through `bus` when there is one.
 */
export class DeploymentHealth {
  private readonly tracked = new Map<string, Tracked>();
  private readonly instanceId: string;
  private readonly unsubscribe: (() => void) | undefined;

  constructor(private readonly settings: HealthSettings) {
    this.instanceId = settings.instanceId ?? randomUUID();
    const bus = settings.bus;
    if (!bus) return;
    this.unsubscribe = bus.subscribe((notice) => this.hear(notice));
    bus
      .current?.()
      .then((notices) => {
        for (const notice of notices) this.hear(notice);
      })
      .catch((error: unknown) => settings.logger?.warn('health bus: reading current notices failed', { message: String(error) }));
  }

  /** The breaker's state. */
  state(deployment: Deployment, now = Date.now()): BreakerState {
    return this.entry(deployment).breaker.state(now);
  }

  /** Whether a request may be routed to it: not open, and not half-open with its probe already out. */
  isAvailable(deployment: Deployment, now = Date.now()): boolean {
    return this.entry(deployment).breaker.admits(now);
  }

  /** Whether its breaker is open (it is tried only as a last resort). */
  isCooling(deployment: Deployment, now = Date.now()): boolean {
    return this.state(deployment, now) === 'open';
  }

  /**
   * Lower is better: peak-EWMA time to first byte × (1 + requests in flight), divided by
   * 1 − the recent error rate. A half-open deployment scores −1, below any other (even an
   * unmeasured one), so its probe goes first.
   */
  score(deployment: Deployment, now = Date.now()): number {
    const tracked = this.entry(deployment);
    if (tracked.breaker.state(now) === 'half_open') return HALF_OPEN_SCORE;
    const latency = tracked.latency.read(now);
    const load = !tracked.latency.known && tracked.inFlight > 0 ? UNKNOWN_BUSY_PENALTY + tracked.inFlight : latency * (1 + tracked.inFlight);
    return load / (1 - tracked.breaker.errorRate(now));
  }

  /** Requests in flight on it, in this process. */
  inFlight(deployment: Deployment): number {
    return this.tracked.get(deployment.id)?.inFlight ?? 0;
  }

  /**
   * An attempt starts on it: counted in flight until the lease is released, once, whatever ends
   * the request. On a half-open deployment the first attempt is the probe and holds its slot.
   */
  begin(deployment: Deployment, now = Date.now()): InFlightLease {
    const tracked = this.entry(deployment);
    tracked.inFlight++;
    const probe = tracked.breaker.startProbe(now);
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        // The entry itself, not a lookup: one dropped from the map since must not be confused with a new one.
        tracked.inFlight--;
        if (probe) tracked.breaker.endProbe();
      },
    };
  }

  /** An attempt got its first byte after `firstByteMs`: a latency sample, and a half-open breaker closes. */
  succeeded(deployment: Deployment, firstByteMs?: number, now = Date.now()): void {
    const tracked = this.entry(deployment);
    const transition = tracked.breaker.succeeded(now);
    if (transition) tracked.latency.reset(now);
    // At least 1 ms (the clock's grain): a 0 would make the load factor count for nothing.
    if (firstByteMs !== undefined) tracked.latency.observe(Math.max(1, firstByteMs), now);
    if (transition) this.publish(deployment, transition);
  }

  /**
   * A retryable failure of the upstream's; `retryAfterMs` (from a 429) opens the breaker at once
   * for that long (at most `openMs`). `elapsedMs`, how long the attempt took, can only raise
   * the latency estimate: a fast refusal must not make a deployment look fast.
   */
  failed(deployment: Deployment, retryAfterMs: number | undefined, now = Date.now(), elapsedMs?: number): void {
    const tracked = this.entry(deployment);
    if (elapsedMs !== undefined && elapsedMs > tracked.latency.read(now)) tracked.latency.observe(elapsedMs, now);
    const transition = tracked.breaker.failed(retryAfterMs, now);
    if (transition) this.publish(deployment, transition);
  }

  /** Each deployment this instance has seen, with its breaker state (the metrics' health gauge reads it). */
  snapshot(now = Date.now()): DeploymentHealthEntry[] {
    const entries: DeploymentHealthEntry[] = [];
    for (const [deployment, tracked] of this.tracked) {
      // Known only from another instance's notice so far: its provider is not known here yet.
      if (tracked.provider === undefined) continue;
      entries.push({ deployment, provider: tracked.provider, state: tracked.breaker.state(now) });
    }
    return entries;
  }

  /** Forgets every breaker, latency and load (e.g. between tests, or after the upstreams were fixed). */
  clear(): void {
    this.tracked.clear();
  }

  /** Stops hearing the bus (the bus itself is its owner's to close). */
  close(): void {
    this.unsubscribe?.();
  }

  private entry(deployment: Deployment): Tracked {
    const tracked = this.tracked.get(deployment.id);
    if (!tracked) return this.track(deployment.id, deployment.provider);
    tracked.provider ??= deployment.provider;
    return tracked;
  }

  private track(id: string, provider: string | undefined): Tracked {
    const now = Date.now();
    const tracked: Tracked = { provider, breaker: new CircuitBreaker(this.settings), latency: new PeakEwma(this.settings.latencyDecayMs, now), inFlight: 0 };
    setBounded(this.tracked, id, tracked, DEPLOYMENTS_MAX);
    return tracked;
  }

  private publish(deployment: Deployment, transition: BreakerTransition): void {
    this.settings.bus?.publish({ deployment: deployment.id, ...transition, from: this.instanceId });
  }

  /** Another instance's notice; this one's own coming back, and malformed ones, are ignored. */
  private hear(notice: HealthNotice): void {
    if (typeof notice !== 'object' || notice === null || notice.from === this.instanceId || typeof notice.deployment !== 'string') return;
    const now = Date.now();
    const tracked = this.tracked.get(notice.deployment) ?? this.track(notice.deployment, undefined);
    if (notice.state === 'closed') {
      tracked.breaker.heard({ state: 'closed' }, now);
      return;
    }
    if (notice.state !== 'open' && notice.state !== 'backoff') return;
    const forMs = notice.forMs;
    if (typeof forMs !== 'number' || !(forMs > 0)) return;
    // Bounded by this instance's own longest open time: a wrong notice cannot shut a deployment out for good.
    tracked.breaker.heard({ state: notice.state, forMs: Math.min(forMs, Math.max(this.settings.maxOpenMs, this.settings.openMs)) }, now);
  }
}
