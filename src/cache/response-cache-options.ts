import type { ResponseCacheStore } from './cache-store.js';
import { MemoryCacheStore } from './memory-cache-store.js';

/**
 * The exact-match response cache (`GatewayOptions.responseCache`). Setting it makes the cache
 * available; what is cached is opted in per model (`cache: true`), per key (`KeyRecord.cache`)
 * or per request (`x-infergate-cache: on`).
 */
export interface ResponseCacheOptions {
  /** How long an answer is served from the cache, in seconds. Default 300. */
  ttlSeconds?: number | undefined;
  /** Most answers the default memory store keeps; the least recently used goes first. Default 10,000. */
  maxEntries?: number | undefined;
  /** Largest answer kept, in bytes of its stored JSON; a larger one is not cached. Default 1 MiB. */
  maxEntryBytes?: number | undefined;
  /**
   * Also cache requests that sample: `temperature` above 0, or absent (every protocol's default
   * is 1). Default false: only `temperature: 0` is cached, unless the model's `cache` says
   * `{ allowSampling: true }`.
   */
  allowSampling?: boolean | undefined;
  /**
   * Where answers live. Default: in memory, this process only (`maxEntries`, 64 Mi characters in
   * all). Several instances share `RedisCacheStore` from `infergate/redis`.
   */
  store?: ResponseCacheStore | undefined;
}

/** The cache's settings after validation. */
export interface ResolvedResponseCache {
  ttlMs: number;
  maxEntryBytes: number;
  allowSampling: boolean;
  store: ResponseCacheStore;
}

/** Validates `options.responseCache` (`true` takes every default); throws a `TypeError` naming the bad field. */
export function resolveResponseCache(option: ResponseCacheOptions | boolean | undefined): ResolvedResponseCache | undefined {
  if (option === undefined || option === false) return undefined;
  if (option !== true && (typeof option !== 'object' || option === null)) {
    throw new TypeError('options.responseCache must be true or { ttlSeconds?, maxEntries?, maxEntryBytes?, allowSampling?, store? }');
  }
  const settings = option === true ? {} : option;
  const ttlSeconds = settings.ttlSeconds ?? 300;
  const maxEntries = settings.maxEntries ?? 10_000;
  const maxEntryBytes = settings.maxEntryBytes ?? 1024 * 1024;
  for (const [name, value] of Object.entries({ ttlSeconds, maxEntries, maxEntryBytes })) {
    if (!Number.isInteger(value) || value < 1) throw new TypeError(`options.responseCache.${name} must be a positive integer`);
  }
  if (settings.allowSampling !== undefined && typeof settings.allowSampling !== 'boolean') {
    throw new TypeError('options.responseCache.allowSampling must be a boolean');
  }
  const store = settings.store;
  if (store !== undefined && (typeof store?.get !== 'function' || typeof store.set !== 'function')) {
    throw new TypeError('options.responseCache.store must be a ResponseCacheStore (get, set)');
  }
  return {
    ttlMs: ttlSeconds * 1000,
    maxEntryBytes,
    allowSampling: settings.allowSampling ?? false,
    store: store ?? new MemoryCacheStore({ maxEntries }),
  };
}
