/**
 * A deployment's health as one instance decided it, told to the others: a breaker that opened
 * (or a cooldown), a 429 that asked to wait, or a deployment that answered again. Latency is not
 * shared: it is what each instance sees of the upstream from where it runs.
 */
export interface HealthNotice {
  /** Deployment id (`Deployment.id`). */
  deployment: string;
  /**
   * `open`: avoid it for `forMs` (its breaker opened, or it cools down after failures);
   * `backoff`: it answered 429 and asked to wait `forMs` (its `retry-after`);
   * `closed`: it answered again (a half-open probe succeeded): forget the two above.
   */
  state: 'open' | 'backoff' | 'closed';
  /**
   * How long the state holds, in ms from when the notice is received (a duration, not a time,
   * so that instances' clocks need not agree). Absent for `closed`.
   */
  forMs?: number | undefined;
  /** Id of the instance that published it: an instance ignores its own notices coming back. */
  from: string;
}

/**
 * How instances share deployment health. Without one, health is per process. The Redis one
 * (`RedisHealthBus` in `infergate/redis`) publishes on the gateway's Redis connection.
 */
export interface HealthBus {
  /** Tells the other instances. Fire and forget: never throws, never waits on the network. */
  publish(notice: HealthNotice): void;
  /** Hears the other instances' notices (and possibly this one's own); returns the unsubscribe function. */
  subscribe(listener: (notice: HealthNotice) => void): () => void;
  /** Notices still in force, with `forMs` the time they have left: read by an instance that starts late. */
  current?(): Promise<HealthNotice[]>;
  close?(): Promise<void>;
}
