import { describe, expect, it } from 'vitest';
import { MemoryCacheStore } from '../../src/cache/memory-cache-store.js';
import { resolveResponseCache } from '../../src/cache/response-cache-options.js';
import { parseConfig } from '../../src/config.js';

describe('responseCache option', () => {
  it('is off unless set; true takes the defaults', () => {
    expect(resolveResponseCache(undefined)).toBeUndefined();
    expect(resolveResponseCache(false)).toBeUndefined();
    const defaults = resolveResponseCache(true)!;
    expect(defaults).toMatchObject({ ttlMs: 300_000, maxEntryBytes: 1024 * 1024, allowSampling: false });
    expect(defaults.store).toBeInstanceOf(MemoryCacheStore);
  });

  it('names the bad field', () => {
    expect(() => resolveResponseCache({ ttlSeconds: 0 })).toThrow('options.responseCache.ttlSeconds must be a positive integer');
    expect(() => resolveResponseCache({ maxEntries: 1.5 })).toThrow('options.responseCache.maxEntries must be a positive integer');
    expect(() => resolveResponseCache({ allowSampling: 'yes' as never })).toThrow('options.responseCache.allowSampling must be a boolean');
    expect(() => resolveResponseCache({ store: {} as never })).toThrow('options.responseCache.store must be a ResponseCacheStore (get, set)');
    expect(() => resolveResponseCache(3 as never)).toThrow(/options.responseCache must be true or/);
  });

  it('reads responseCache, a model cache and a key cache from the config file', () => {
    const config = parseConfig({
      keys: [{ key: 'sk-1', cache: true }],
      models: [
        { id: 'a', provider: 'local', cache: true },
        { id: 'b', provider: 'local', cache: { allowSampling: true } },
      ],
      responseCache: { ttlSeconds: 60, maxEntries: 5, allowSampling: false, store: { type: 'redis', url: 'redis://127.0.0.1:6379' } },
    });
    expect(config.responseCache).toEqual({ ttlSeconds: 60, maxEntries: 5, allowSampling: false });
    expect(config.redisCacheStore).toEqual({ type: 'redis', url: 'redis://127.0.0.1:6379' });
    expect(config.models.map((model) => model.cache)).toEqual([true, { allowSampling: true }]);
    expect(config.keys[0]!.cache).toBe(true);
    expect(() => parseConfig({ keys: [{ key: 'k' }], responseCache: { ttl: 5 } })).toThrow(/responseCache/);
    expect(() => parseConfig({ keys: [{ key: 'k' }], models: [{ id: 'a', provider: 'local', cache: 'yes' }] })).toThrow(
      /models\[0\]\.cache: expected true, false or/,
    );
  });
});
