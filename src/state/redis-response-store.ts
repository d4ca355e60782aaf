import type { RedisConnectionOptions } from '../redis/connection.js';
import { FailFastRedis } from '../redis/fail-fast-redis.js';
import { itemsWithIds, type ResponseStore, type StoredResponse } from './response-store.js';

export interface RedisResponseStoreOptions extends RedisConnectionOptions {
  /** Prefix of every key. Default `infergate:`. */
  keyPrefix?: string | undefined;
  /** How long a response can be continued after it was stored, in seconds. Default 30 days. */
  ttlSeconds?: number | undefined;
  /**
   * How long `get` and `put` wait for Redis before rejecting, in ms: a `previous_response_id`
   * then fails with a 500 instead of holding the request while Redis is down. Default 2000.
   */
  timeoutMs?: number | undefined;
}

/**
 * Responses in Redis (through `ioredis`, an optional peer dependency), so that a conversation
 * continues on whichever gateway instance gets its next turn. Import it from `infergate/redis`:
 *
 * ```ts
 * import { RedisResponseStore } from 'infergate/redis';
 * createGateway({ keys, models, responseStore: new RedisResponseStore({ url: process.env.REDIS_URL }) });
 * ```
 *
 * Layout: one string key per response, `<prefix>response:<id>`, holding the `StoredResponse` as
 * JSON and expiring `ttlSeconds` after it was written; and one string key per item with an id,
 * `<prefix>item:<url-encoded key id>:<item id>`, holding that item as JSON with the same expiry.
 * `put` writes the items, then the response, each with its own SET sent at once (one round trip),
 * rewriting the items an earlier response already wrote, which renews their expiry; `getItems` is
 * one GET per item. The key id in the item's key keeps each key's items apart. No command spans
 * two keys and there is no hash tag: on a Redis Cluster responses and items spread over every shard.
 */
export class RedisResponseStore implements ResponseStore {
  private readonly connection: FailFastRedis;
  /** The key prefix (`infergate:`), before `response:` or `item:`. */
  private readonly prefix: string;
  private readonly ttlSeconds: number;

  constructor(options: RedisResponseStoreOptions) {
    if (!options) throw new TypeError('RedisResponseStore: pass `client` (an ioredis client or cluster), `url`, `cluster` or `sentinel`');
    this.prefix = options.keyPrefix ?? 'infergate:';
    this.ttlSeconds = options.ttlSeconds ?? 30 * 24 * 3600;
    if (!Number.isInteger(this.ttlSeconds) || this.ttlSeconds < 1) throw new TypeError('RedisResponseStore: ttlSeconds must be a positive integer');
    this.connection = new FailFastRedis({ ...options, timeoutMs: options.timeoutMs ?? 2000, owner: 'RedisResponseStore' });
  }

  async get(id: string): Promise<StoredResponse | undefined> {
    const json = await this.connection.call((redis) => redis.get(`${this.prefix}response:${id}`));
    return json ? (JSON.parse(json) as StoredResponse) : undefined;
  }

  /**
   * One SET per key, all sent at once: the keys are in different cluster slots, so no MULTI. The
   * items go first and the response last, so a response read back finds its items (each key's
   * commands reach its node in the order sent).
   */
  async put(response: StoredResponse): Promise<void> {
    const json = JSON.stringify(response);
    await this.connection.call((redis) =>
      Promise.all([
        ...itemsWithIds(response.items).map(([itemId, item]) => redis.set(this.itemKey(response.keyId, itemId), JSON.stringify(item), 'EX', this.ttlSeconds)),
        redis.set(`${this.prefix}response:${response.id}`, json, 'EX', this.ttlSeconds),
      ]),
    );
  }

  /** One GET per item, sent at once (not an MGET: on a cluster the items are in different slots). */
  async getItems(keyId: string, ids: string[]): Promise<(unknown | undefined)[]> {
    if (ids.length === 0) return [];
    const found = await this.connection.call((redis) => Promise.all(ids.map((id) => redis.get(this.itemKey(keyId, id)))));
    return found.map((json) => (json ? (JSON.parse(json) as unknown) : undefined));
  }

  /** Only the response's key: its items are shared with the later responses of its conversation. */
  async delete(id: string): Promise<boolean> {
    const removed = await this.connection.call((redis) => redis.del(`${this.prefix}response:${id}`));
    return removed > 0;
  }

  private itemKey(keyId: string, itemId: string): string {
    return `${this.prefix}item:${encodeURIComponent(keyId)}:${itemId}`;
  }

  close(): Promise<void> {
    return this.connection.close();
  }
}
