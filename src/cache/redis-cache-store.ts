import type { RedisConnectionOptions } from '../redis/connection.js';
import { FailFastRedis } from '../redis/fail-fast-redis.js';
import type { ResponseCacheStore } from './cache-store.js';

export interface RedisCacheStoreOptions extends RedisConnectionOptions {
  /** Prefix of every key. Default `infergate:`. */
  keyPrefix?: string | undefined;
  /**
   * How long `get` and `set` wait for Redis, in ms. A lookup that times out is a miss, a store
   * that fails is logged: the cache never fails a request. Default 500.
   */
  timeoutMs?: number | undefined;
}

/**
 * The response cache in Redis (through `ioredis`, an optional peer dependency), shared by every
 * gateway instance. Import it from `infergate/redis`:
 *
 * ```ts
 * import { RedisCacheStore } from 'infergate/redis';
 * createGateway({ keys, models, responseCache: { store: new RedisCacheStore({ url: process.env.REDIS_URL }) } });
 * ```
 *
 * Layout: one string key per answer, `<prefix>cache:<url-encoded key id>:<sha256 of the request>`,
 * written with `SET … PX <ttl>` so Redis expires it; entries over `responseCache.maxEntryBytes`
 * are never written. The number of entries is bounded by the TTL and Redis's own `maxmemory`
 * policy (an LRU policy such as `allkeys-lru` suits a cache).
 */
export class RedisCacheStore implements ResponseCacheStore {
  private readonly connection: FailFastRedis;
  private readonly prefix: string;

  constructor(options: RedisCacheStoreOptions) {
    if (!options) throw new TypeError('RedisCacheStore: pass `client` (an ioredis client or cluster), `url`, `cluster` or `sentinel`');
    this.prefix = `${options.keyPrefix ?? 'infergate:'}cache:`;
    this.connection = new FailFastRedis({ ...options, timeoutMs: options.timeoutMs ?? 500, owner: 'RedisCacheStore' });
  }

  async get(key: string): Promise<string | undefined> {
    return (await this.connection.call((redis) => redis.get(this.prefix + key))) ?? undefined;
  }

  async set(key: string, value: string, ttlMs: number): Promise<void> {
    await this.connection.call((redis) => redis.set(this.prefix + key, value, 'PX', Math.max(1, Math.round(ttlMs))));
  }

  close(): Promise<void> {
    return this.connection.close();
  }
}
