import { setBounded } from '../bounded-map.js';
import type { HealthBus, HealthNotice } from './health-bus.js';

/** Notices in force remembered at most (deployment ids of wildcard models are the clients' names). */
const NOTICES_MAX = 10_000;

/**
 * A health bus within one process: for a host running several gateways side by side, and for
 * tests. Notices reach the listeners asynchronously (as over a network), never the publisher's
 * own call stack.
 */
export class MemoryHealthBus implements HealthBus {
  private readonly listeners = new Set<(notice: HealthNotice) => void>();
  /** Open and backoff notices still in force, by deployment, with when they end. */
  private readonly inForce = new Map<string, { notice: HealthNotice; until: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  publish(notice: HealthNotice): void {
    if (notice.state === 'closed') this.inForce.delete(notice.deployment);
    else if (notice.forMs !== undefined) setBounded(this.inForce, notice.deployment, { notice, until: this.now() + notice.forMs }, NOTICES_MAX);
    const copy = { ...notice };
    queueMicrotask(() => {
      for (const listener of this.listeners) {
        try {
          listener(copy);
        } catch {
          // A listener's failure is its own; the others still hear.
        }
      }
    });
  }

  subscribe(listener: (notice: HealthNotice) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async current(): Promise<HealthNotice[]> {
    const now = this.now();
    const notices: HealthNotice[] = [];
    for (const [deployment, { notice, until }] of this.inForce) {
      if (until > now) notices.push({ ...notice, forMs: until - now });
      else this.inForce.delete(deployment);
    }
    return notices;
  }

  async close(): Promise<void> {
    this.listeners.clear();
  }
}
