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
 * notification is lost. A lookup that started before a `clear` does not store its (maybe stale)
 * answer.
 */
export class LookupCache {
  private readonly entries = new Map<string, Cached>();
  private generation = 0;

  constructor(
    private readonly ttlMs: number,
    private readonly size: number,
  ) {}

  /** The answer for `hash` (found or not), or `miss` when it must be asked for. */
  async get(hash: string, ask: () => Promise<LookupAnswer>): Promise<KeyRecord | undefined> {
    const cached = this.entries.get(hash);
    if (cached && cached.until > performance.now()) return usable(cached);
    if (cached) this.entries.delete(hash);
    const generation = this.generation;
    const answer = await ask();
    if (this.ttlMs > 0 && generation === this.generation) setBounded(this.entries, hash, { ...answer, until: performance.now() + this.ttlMs }, this.size);
    return usable(answer);
  }

  /** Forgets every answer (a key changed somewhere, or the notifications may have been missed). */
  clear(): void {
    this.generation += 1;
    this.entries.clear();
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
