import type { RedisConnectionOptions } from '../redis/connection.js';
import { FailFastRedis } from '../redis/fail-fast-redis.js';
import { DEFAULT_MCP_SESSION_TTL_SECONDS, type McpSessionRecord, type McpSessionStore, parseSessionRecord } from './session-store.js';

export interface RedisMcpSessionStoreOptions extends RedisConnectionOptions {
  /** Prefix of every key. Default `infergate:`. */
  keyPrefix?: string | undefined;
  /** A session unused this long is gone, in seconds. Default a day. */
  ttlSeconds?: number | undefined;
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
 * a 404 and initializes again. One key per command: on a Redis Cluster sessions spread over every shard.
 */
export class RedisMcpSessionStore implements McpSessionStore {
  private readonly connection: FailFastRedis;
  private readonly prefix: string;
  private readonly ttlSeconds: number;

  constructor(options: RedisMcpSessionStoreOptions) {
    if (!options) throw new TypeError('RedisMcpSessionStore: pass `client` (an ioredis client or cluster), `url`, `cluster` or `sentinel`');
    this.prefix = options.keyPrefix ?? 'infergate:';
    this.ttlSeconds = options.ttlSeconds ?? DEFAULT_MCP_SESSION_TTL_SECONDS;
    if (!Number.isInteger(this.ttlSeconds) || this.ttlSeconds < 1) throw new TypeError('RedisMcpSessionStore: ttlSeconds must be a positive integer');
    this.connection = new FailFastRedis({ ...options, timeoutMs: options.timeoutMs ?? 2000, owner: 'RedisMcpSessionStore' });
  }

  async get(id: string): Promise<McpSessionRecord | undefined> {
    if (id.length > MAX_ID_LENGTH) return undefined;
    const json = await this.connection.call((redis) => redis.getex(this.key(id), 'EX', this.ttlSeconds));
    return json === null ? undefined : parseSessionRecord(json);
  }

  async set(id: string, record: McpSessionRecord): Promise<void> {
    await this.connection.call((redis) => redis.set(this.key(id), JSON.stringify(record), 'EX', this.ttlSeconds));
  }

  async delete(id: string): Promise<void> {
    if (id.length > MAX_ID_LENGTH) return;
    await this.connection.call((redis) => redis.del(this.key(id)));
  }

  private key(id: string): string {
    return `${this.prefix}mcp-session:${id}`;
  }

  close(): Promise<void> {
    return this.connection.close();
  }
}
