import type { AttemptEvent } from '../policy/events.js';

export interface AttemptBufferLimits {
  /** A request whose usage event has not come after this long is dropped. */
  ttlMs: number;
  /** Requests held at once; past it the oldest is dropped. */
  maxRequests: number;
  /** Attempts kept per request; later ones are dropped. */
  maxAttemptsPerRequest: number;
}

export const DEFAULT_ATTEMPT_BUFFER_LIMITS: AttemptBufferLimits = { ttlMs: 10 * 60_000, maxRequests: 10_000, maxAttemptsPerRequest: 32 };

/**
 * Attempt events held until their request's usage event, which comes last. Bounded in every
 * direction and without timers: expired requests are swept, oldest first, on each add.
 */
export class AttemptBuffer {
  /** Insertion order is age order, so the sweep stops at the first request still young. */
  private readonly pending = new Map<string, { since: number; attempts: AttemptEvent[] }>();

  constructor(private readonly limits: AttemptBufferLimits = DEFAULT_ATTEMPT_BUFFER_LIMITS) {}

  add(event: AttemptEvent, now = Date.now()): void {
    this.sweep(now);
    let entry = this.pending.get(event.requestId);
    if (!entry) {
      if (this.pending.size >= this.limits.maxRequests) this.dropOldest();
      entry = { since: now, attempts: [] };
      this.pending.set(event.requestId, entry);
    }
    if (entry.attempts.length < this.limits.maxAttemptsPerRequest) entry.attempts.push(event);
  }

  /** The request's attempts, in arrival order, and forgets them. */
  take(requestId: string): AttemptEvent[] {
    const entry = this.pending.get(requestId);
    if (!entry) return [];
    this.pending.delete(requestId);
    return entry.attempts;
  }

  get size(): number {
    return this.pending.size;
  }

  private sweep(now: number): void {
    for (const [requestId, entry] of this.pending) {
      if (now - entry.since < this.limits.ttlMs) return;
      this.pending.delete(requestId);
    }
  }

  private dropOldest(): void {
    const oldest = this.pending.keys().next();
    if (!oldest.done) this.pending.delete(oldest.value);
  }
}
