import type { ResponseCacheStore } from './cache-store.js';

export interface MemoryCacheStoreOptions {
  /** Most entries kept; the least recently used goes first. Default 10,000. */
  maxEntries?: number | undefined;
  /** Most characters kept across all entries; the least recently used go first. Default 64 Mi. */
  maxChars?: number | undefined;
  /** The clock expiry is read from, in ms since epoch (tests pass their own). Default `Date.now`. */
  now?: (() => number) | undefined;
}

interface Entry {
  value: string;
  expiresAt: number;
}

/**
 * The default response cache store: a least-recently-used map in this process, bounded by
 * entries and by total size, each entry expiring on its own. A `Map` keeps insertion order, so
 * a read moves its entry to the end and eviction takes from the front.
 */
export class MemoryCacheStore implements ResponseCacheStore {
  private readonly entries = new Map<string, Entry>();
  private readonly maxEntries: number;
  private readonly maxChars: number;
  private readonly now: () => number;
  private chars = 0;

  constructor(options: MemoryCacheStoreOptions = {}) {
    this.maxEntries = options.maxEntries ?? 10_000;
    this.maxChars = options.maxChars ?? 64 * 1024 * 1024;
    this.now = options.now ?? Date.now;
    if (!Number.isInteger(this.maxEntries) || this.maxEntries < 1) throw new TypeError('MemoryCacheStore: maxEntries must be a positive integer');
    if (!Number.isInteger(this.maxChars) || this.maxChars < 1) throw new TypeError('MemoryCacheStore: maxChars must be a positive integer');
  }

  /** Entries held, expired ones not yet swept included. */
  get size(): number {
    return this.entries.size;
  }

  /** The keys held, least recently used first. */
  keys(): IterableIterator<string> {
    return this.entries.keys();
  }

  get(key: string): string | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    if (entry.expiresAt <= this.now()) {
      this.chars -= entry.value.length;
      return undefined;
    }
    this.entries.set(key, entry);
    return entry.value;
  }

  set(key: string, value: string, ttlMs: number): void {
    if (value.length > this.maxChars) return;
    this.delete(key);
    this.entries.set(key, { value, expiresAt: this.now() + ttlMs });
    this.chars += value.length;
    for (const [oldest] of this.entries) {
      if (this.entries.size <= this.maxEntries && this.chars <= this.maxChars) break;
      this.delete(oldest);
    }
  }

  private delete(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.chars -= entry.value.length;
  }
}
