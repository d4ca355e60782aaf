import type { RedisConnectionOptions } from '../redis/connection.js';
import { FailFastRedis } from '../redis/fail-fast-redis.js';
import {
  DEFAULT_MCP_MAX_SESSIONS_PER_KEY,
  DEFAULT_MCP_SESSION_TTL_SECONDS,
  type McpSessionRecord,
  type McpSessionStore,
  parseSessionRecord,
} from './session-store.js';

export interface RedisMcpSessionStoreOptions extends RedisConnectionOptions {
  /** Prefix of every key. Default `infergate:`. */
  keyPrefix?: string | undefined;
  /** A session unused this long is gone, in seconds. Default a day. */
  ttlSeconds?: number | undefined;
  /** Most sessions one key holds; past it its oldest written goes. Default 1,000. */
  maxSessionsPerKey?: number | undefined;
  /** How long a call waits for Redis before rejecting, in ms (the request then fails, never hangs). Default 2000. */
  timeoutMs?: number | undefined;
}

/** Longest session id looked up: the gateway's are UUIDs; a longer header is no session of ours. */
const MAX_ID_LENGTH = 128;

/**
 * MCP client sessions in Redis (through `ioredis`, an optional peer dependency), so that every
 * gateway instance behind a balancer serves every session. Import it from `infergate/redis`:
 *
 * ```ts
 * import { RedisMcpSessionStore } from 'infergate/redis';
 * createGateway({ keys, mcp: { servers, sessionStore: new RedisMcpSessionStore({ url: process.env.REDIS_URL }) } });
 * ```
 *
 * Layout: one string key per session, `<prefix>mcp-session:<id>`, holding the record as JSON and
 * expiring `ttlSeconds` after its last use: `get` renews it (GETEX, Redis 6.2 or later). A
 * record that does not read back as one (corrupted, hand-edited) is no session: the client gets
 * a 404 and initializes again. Each key's sessions are indexed in a sorted set,
 * `<prefix>mcp-sessions:<url-encoded key id>`, scored by when each was last written, so a key
 * opening sessions in a loop holds at most `maxSessionsPerKey`: past it its oldest written are
 * deleted. Entries older than the TTL leave the index as it is written. No command spans two
 * keys: on a Redis Cluster sessions and indexes spread over every shard.
 */
export class RedisMcpSessionStore implements McpSessionStore {
  private readonly connection: FailFastRedis;
  private readonly prefix: string;
  private readonly ttlSeconds: number;
  private readonly maxSessionsPerKey: number;

  constructor(options: RedisMcpSessionStoreOptions) {
    if (!options) throw new TypeError('RedisMcpSessionStore: pass `client` (an ioredis client or cluster), `url`, `cluster` or `sentinel`');
    this.prefix = options.keyPrefix ?? 'infergate:';
    this.ttlSeconds = options.ttlSeconds ?? DEFAULT_MCP_SESSION_TTL_SECONDS;
    this.maxSessionsPerKey = options.maxSessionsPerKey ?? DEFAULT_MCP_MAX_SESSIONS_PER_KEY;
    for (const [name, value] of Object.entries({ ttlSeconds: this.ttlSeconds, maxSessionsPerKey: this.maxSessionsPerKey })) {
      if (!Number.isInteger(value) || value < 1) throw new TypeError(`RedisMcpSessionStore: ${name} must be a positive integer`);
    }
    this.connection = new FailFastRedis({ ...options, timeoutMs: options.timeoutMs ?? 2000, owner: 'RedisMcpSessionStore' });
  }

  async get(id: string): Promise<McpSessionRecord | undefined> {
    if (id.length > MAX_ID_LENGTH) return undefined;
    const json = await this.connection.call((redis) => redis.getex(this.key(id), 'EX', this.ttlSeconds));
    return json === null ? undefined : parseSessionRecord(json);
  }

  /** The session, and its place in its key's index; the key's oldest written past the bound are deleted. */
  async set(id: string, record: McpSessionRecord): Promise<void> {
    const index = this.indexKey(record.keyId);
    const now = Date.now();
    // The index's commands reach its node in the order sent: ZCARD counts this session.
    const [, , , , count] = await this.connection.call((redis) =>
      Promise.all([
        redis.set(this.key(id), JSON.stringify(record), 'EX', this.ttlSeconds),
        redis.zadd(index, now, id),
        redis.zremrangebyscore(index, '-inf', now - this.ttlSeconds * 1000),
        redis.expire(index, this.ttlSeconds),
        redis.zcard(index),
      ]),
    );
    const excess = count - this.maxSessionsPerKey;
    if (excess <= 0) return;
    await this.connection.call(async (redis) => {
      // Never the session just written, even when others were written in the same millisecond.
      const oldest = (await redis.zrange(index, '0', String(excess))).filter((member) => member !== id).slice(0, excess);
      await Promise.all([redis.zrem(index, ...oldest), ...oldest.map((member) => redis.del(this.key(member)))]);
    });
  }

  /** `SET … XX`: a session a DELETE has removed (or that expired) stays gone. */
  async update(id: string, record: McpSessionRecord): Promise<void> {
    if (id.length > MAX_ID_LENGTH) return;
    await this.connection.call((redis) => redis.set(this.key(id), JSON.stringify(record), 'EX', this.ttlSeconds, 'XX'));
  }

  async delete(id: string): Promise<void> {
    if (id.length > MAX_ID_LENGTH) return;
    const json = await this.connection.call((redis) => redis.getdel(this.key(id)));
    const keyId = json === null ? undefined : parseSessionRecord(json)?.keyId;
    if (keyId !== undefined) await this.connection.call((redis) => redis.zrem(this.indexKey(keyId), id));
  }

  private key(id: string): string {
    return `${this.prefix}mcp-session:${id}`;
  }

  private indexKey(keyId: string): string {
    return `${this.prefix}mcp-sessions:${encodeURIComponent(keyId)}`;
  }

  close(): Promise<void> {
    return this.connection.close();
  }
}
