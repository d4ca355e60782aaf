import type { KeyRecord } from '../../auth/key-store.js';
import { setBounded } from '../../bounded-map.js';

/** Longest a shared store may answer from memory: a revoked key is refused everywhere within it (and a second). */
export const LOOKUP_CACHE_MAX_TTL_MS = 500;

/** What a store's lookup found for a hash: the key's record (none: unknown) and when a previous secret stops working. */
export interface LookupAnswer {
  record: KeyRecord | undefined;
  /** ms since epoch (Node's clock); absent for a key's current secret. */
  expiresAt?: number | undefined;
}

interface Cached extends LookupAnswer {
  /** `performance.now()` past which the entry is not used. */
  until: number;
}

/**
 * The answers of a shared store's lookups for a short while, so a burst of requests with one key
 * costs one database round trip, not one each. Changes on any instance empty it (`clear`, on the
 * store's notification), and nothing is kept longer than `ttlMs` (≤ 500 ms) in case a
 * notification is lost. Lookups of one hash at the same time share one question; one asked
 * before a `clear` is not shared or kept after it (its answer may be from before the change).
 */
export class LookupCache {
  private readonly entries = new Map<string, Cached>();
  /** The questions on their way, by hash. */
  private readonly asking = new Map<string, Promise<LookupAnswer>>();

  constructor(
    private readonly ttlMs: number,
    private readonly size: number,
  ) {}

  /** The answer for `hash` (found or not): from memory, from a question already on its way, or from `ask`. */
  async get(hash: string, ask: () => Promise<LookupAnswer>): Promise<KeyRecord | undefined> {
    const cached = this.entries.get(hash);
    if (cached && cached.until > performance.now()) return usable(cached);
    if (cached) this.entries.delete(hash);
    // Requests that arrive together with one key share one question.
    let asking = this.asking.get(hash);
    if (!asking) {
      const question: Promise<LookupAnswer> = Promise.resolve()
        .then(ask)
        .then(
          (answer) => this.keep(hash, answer, question),
          (error: unknown) => {
            this.done(hash, question);
            throw error;
          },
        );
      asking = question;
      this.asking.set(hash, question);
    }
    return usable(await asking);
  }

  /** Forgets every answer (a key changed somewhere, or the notifications may have been missed). */
  clear(): void {
    this.entries.clear();
    // A question asked before the change may bring the old answer: later lookups ask again.
    this.asking.clear();
  }

  /** Keeps the answer unless the cache was emptied while it was asked (it may be from before a change). */
  private keep(hash: string, answer: LookupAnswer, question: Promise<LookupAnswer>): LookupAnswer {
    if (this.ttlMs > 0 && this.asking.get(hash) === question) setBounded(this.entries, hash, { ...answer, until: performance.now() + this.ttlMs }, this.size);
    this.done(hash, question);
    return answer;
  }

  private done(hash: string, question: Promise<LookupAnswer>): void {
    if (this.asking.get(hash) === question) this.asking.delete(hash);
  }
}

/** The record, unless it came through a previous secret whose grace period is over (checked on Node's clock). */
function usable(answer: LookupAnswer): KeyRecord | undefined {
  return answer.expiresAt !== undefined && answer.expiresAt <= Date.now() ? undefined : answer.record;
}

/** Checks a store's `cacheTtlMs` and `cacheSize` options. */
export function cacheOptions(owner: string, ttlMs: number | undefined, size: number | undefined): { ttlMs: number; size: number } {
  const ttl = ttlMs ?? LOOKUP_CACHE_MAX_TTL_MS;
  if (!Number.isFinite(ttl) || ttl < 0 || ttl > LOOKUP_CACHE_MAX_TTL_MS)
    throw new TypeError(`${owner}: cacheTtlMs must be between 0 and ${LOOKUP_CACHE_MAX_TTL_MS} (ms), got ${ttlMs}`);
  const entries = size ?? 10_000;
  if (!Number.isSafeInteger(entries) || entries < 1) throw new TypeError(`${owner}: cacheSize must be a positive integer, got ${size}`);
  return { ttlMs: ttl, size: entries };
}
