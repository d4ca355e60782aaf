/**
 * A peak-sensitive moving average of latency, as Finagle's and Linkerd's (tower) balancers keep
 * it: a sample above the estimate replaces it at once, one below pulls it down gradually, and
 * every read decays it towards 0 with time constant `decayMs`. So a deployment that turns slow
 * is avoided at its first slow answer, and one left alone long enough looks cheap again and
 * gets tried: that is how it regains traffic once it has recovered, without any probe.
 */
export class PeakEwma {
  /** 0 until the first sample: an unknown deployment looks fast, so it gets tried. */
  private estimate = 0;
  private updatedAt: number;
  private sampled = false;

  constructor(
    private readonly decayMs: number,
    now: number,
  ) {
    this.updatedAt = now;
  }

  /** Whether any sample was seen since the start (or the last `reset`). */
  get known(): boolean {
    return this.sampled;
  }

  /** Adds a sample, in ms. */
  observe(sampleMs: number, now: number): void {
    this.sampled = true;
    this.update(sampleMs, now);
  }

  /** The estimate now: reading it decays it, as a sample of 0 would. */
  read(now: number): number {
    this.update(0, now);
    return this.estimate;
  }

  private update(sampleMs: number, now: number): void {
    if (sampleMs > this.estimate) {
      this.estimate = sampleMs;
      this.updatedAt = now;
      return;
    }
    const decay = Math.exp(-Math.max(0, now - this.updatedAt) / this.decayMs);
    this.estimate = this.estimate * decay + sampleMs * (1 - decay);
    this.updatedAt = now;
  }

  /** Forgets every sample (a deployment back from an open breaker starts optimistic again). */
  reset(now: number): void {
    this.estimate = 0;
    this.sampled = false;
    this.updatedAt = now;
  }
}
