/** A deployment's health as routing sees it (and as `DeploymentHealth.snapshot()` reports it). */
export type BreakerState = 'healthy' | 'degraded' | 'open' | 'half_open';

export interface BreakerSettings {
  /** Retryable failures in a row that open the breaker (`retry.failuresBeforeCooldown`). */
  failuresToOpen: number;
  /** How long it first stays open, and the longest 429 `retry-after` it honours (`retry.cooldownMs`). */
  openMs: number;
  /** Cap of the open time, which doubles each time a half-open probe fails. */
  maxOpenMs: number;
  /** Share of recent attempts failed from which a deployment is `degraded` (scored worse, still chosen). */
  degradedErrorRate: number;
}

/** What a transition tells the other instances (`HealthNotice` without its ids). */
export type BreakerTransition = { state: 'open' | 'backoff'; forMs: number } | { state: 'closed' };

/** Time constant of the recent error rate: a failure weighs half as much after ~20 s. */
const ERROR_DECAY_MS = 30_000;

/**
 * One deployment's circuit breaker, driven by live traffic only (no synthetic probes):
 * - `healthy`, or `degraded` when the recent error rate reaches `degradedErrorRate`: chosen,
 *   a degraded one scored worse;
 * - `open` after `failuresToOpen` retryable failures in a row, or a 429 with a `retry-after`:
 *   not chosen (still a last resort at the end of a plan);
 * - `half_open` once the open time has passed: one real request at a time is let through (the
 *   probe); its success closes the breaker, its failure opens it again for twice as long (capped).
 * Times are ms since epoch, passed in, so it can be driven by any clock.
 */
export class CircuitBreaker {
  private failuresInARow = 0;
  private openUntil = 0;
  private halfOpen = false;
  /** The last open time after failures, doubled by each failed probe. */
  private openedForMs = 0;
  private probing = false;
  /** Recent attempts and failures, each decayed with `ERROR_DECAY_MS`. */
  private recentAttempts = 0;
  private recentFailures = 0;
  private countedAt = 0;

  constructor(private readonly settings: BreakerSettings) {}

  state(now: number): BreakerState {
    if (this.openUntil > now) return 'open';
    if (this.openUntil !== 0) {
      // The open time has passed: let a probe through.
      this.openUntil = 0;
      this.halfOpen = true;
      this.probing = false;
    }
    if (this.halfOpen) return 'half_open';
    return this.errorRate(now) >= this.settings.degradedErrorRate ? 'degraded' : 'healthy';
  }

  /**
   * The recent share of failed attempts, with one success assumed (so one failure out of one
   * reads 0.5, never 1): its score divides by 1 minus it.
   */
  errorRate(now: number): number {
    if (this.recentFailures === 0) return 0;
    this.decay(now);
    return this.recentFailures / (this.recentAttempts + 1);
  }

  /** Whether a request may be sent to it now: not open, and not half-open with its probe already out. */
  admits(now: number): boolean {
    const state = this.state(now);
    return state === 'healthy' || state === 'degraded' || (state === 'half_open' && !this.probing);
  }

  /** An attempt starts. True when it is the half-open probe: it holds the probe slot until `endProbe`. */
  startProbe(now: number): boolean {
    if ((this.openUntil === 0 && !this.halfOpen) || this.state(now) !== 'half_open' || this.probing) return false;
    this.probing = true;
    return true;
  }

  endProbe(): void {
    this.probing = false;
  }

  /** An attempt got its first byte. A half-open breaker closes. */
  succeeded(now: number): BreakerTransition | undefined {
    this.count(false, now);
    this.failuresInARow = 0;
    if (this.state(now) !== 'half_open') return undefined;
    this.close();
    return { state: 'closed' };
  }

  /** A retryable failure of the upstream's; `retryAfterMs` when it answered 429 with a `retry-after`. */
  failed(retryAfterMs: number | undefined, now: number): BreakerTransition | undefined {
    this.count(true, now);
    const state = this.state(now);
    if (retryAfterMs !== undefined) {
      const forMs = Math.min(retryAfterMs, this.settings.openMs);
      if (forMs <= 0) return undefined;
      this.open(Math.max(this.openUntil, now + forMs));
      // Already open (429s of requests that were in flight): extended here, not told again.
      return state === 'open' ? undefined : { state: 'backoff', forMs };
    }
    if (state === 'open') return undefined;
    if (state === 'half_open') {
      this.openedForMs = Math.min(this.settings.maxOpenMs, Math.max(this.openedForMs * 2, this.settings.openMs));
      this.open(now + this.openedForMs);
      return { state: 'open', forMs: this.openedForMs };
    }
    if (++this.failuresInARow < this.settings.failuresToOpen) return undefined;
    this.openedForMs = this.settings.openMs;
    this.open(now + this.openedForMs);
    return { state: 'open', forMs: this.openedForMs };
  }

  /** Another instance's word: open (or backoff) for `forMs`, or closed. */
  heard(notice: BreakerTransition, now: number): void {
    if (notice.state === 'closed') {
      if (this.openUntil !== 0 || this.halfOpen) this.close();
      return;
    }
    if (notice.forMs > 0) this.open(Math.max(this.openUntil, now + notice.forMs));
  }

  private open(until: number): void {
    this.openUntil = until;
    this.halfOpen = false;
    this.probing = false;
    this.failuresInARow = 0;
  }

  private close(): void {
    this.openUntil = 0;
    this.halfOpen = false;
    this.openedForMs = 0;
    this.failuresInARow = 0;
  }

  private count(failed: boolean, now: number): void {
    this.decay(now);
    this.recentAttempts++;
    if (failed) this.recentFailures++;
  }

  private decay(now: number): void {
    const elapsed = now - this.countedAt;
    if (elapsed <= 0) return;
    const factor = Math.exp(-elapsed / ERROR_DECAY_MS);
    this.recentAttempts *= factor;
    this.recentFailures *= factor;
    this.countedAt = now;
  }
}
