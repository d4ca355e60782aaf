import { jsonLogger, type Logger } from '../logger.js';
import type { RedisClient, RedisConnectionOptions } from '../redis/connection.js';
import { FailFastRedis } from '../redis/fail-fast-redis.js';
import { duplicateForSubscribing } from '../redis/subscriber.js';
import {
  DEFAULT_MCP_MAX_SESSIONS_PER_KEY,
  DEFAULT_MCP_SESSION_TTL_SECONDS,
  type McpCancelNotice,
  type McpSessionRecord,
  type McpSessionStore,
  parseCancelNotice,
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
  /** Where a cancellation that could not be published or a malformed one heard is told, at most once a minute. Default JSON lines on stderr. */
  logger?: Logger | undefined;
}

/** A cancellation warning is logged at most once in this long. */
const WARN_EVERY_MS = 60_000;

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
 *
 * A client's `notifications/cancelled` that reaches an instance not running the call it names is
 * PUBLISHed on `<prefix>mcp-cancel` (plain pub/sub, which a Redis Cluster forwards to every
 * node); every instance hears it on a connection of its own, made at the gateway's start, and
 * cancels the call if it runs there. Fire and forget: a lost message leaves the call to its own
 * end or its timeout, as without a shared store.
 */
export class RedisMcpSessionStore implements McpSessionStore {
  private readonly connection: FailFastRedis;
  private readonly prefix: string;
  private readonly ttlSeconds: number;
  private readonly maxSessionsPerKey: number;
  private readonly cancelChannel: string;
  private readonly logger: Logger;
  private readonly cancelListeners = new Set<(notice: McpCancelNotice) => void>();
  private subscriber: RedisClient | undefined;
  private subscribed: Promise<void> | undefined;
  private lastWarning = Number.NEGATIVE_INFINITY;
  private closed = false;

  constructor(options: RedisMcpSessionStoreOptions) {
    if (!options) throw new TypeError('RedisMcpSessionStore: pass `client` (an ioredis client or cluster), `url`, `cluster` or `sentinel`');
    this.prefix = options.keyPrefix ?? 'infergate:';
    this.ttlSeconds = options.ttlSeconds ?? DEFAULT_MCP_SESSION_TTL_SECONDS;
    this.maxSessionsPerKey = options.maxSessionsPerKey ?? DEFAULT_MCP_MAX_SESSIONS_PER_KEY;
    for (const [name, value] of Object.entries({ ttlSeconds: this.ttlSeconds, maxSessionsPerKey: this.maxSessionsPerKey })) {
      if (!Number.isInteger(value) || value < 1) throw new TypeError(`RedisMcpSessionStore: ${name} must be a positive integer`);
    }
    this.connection = new FailFastRedis({ ...options, timeoutMs: options.timeoutMs ?? 2000, owner: 'RedisMcpSessionStore' });
    this.cancelChannel = `${this.prefix}mcp-cancel`;
    this.logger = options.logger ?? jsonLogger;
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

  publishCancel(notice: McpCancelNotice): void {
    const message = JSON.stringify(notice);
    // A request id no instance would read back (a client's megabyte-long id) is not sent to all of them.
    if (this.closed || parseCancelNotice(message) === undefined) return;
    this.connection
      .call((redis) => redis.publish(this.cancelChannel, message))
      .catch((error: unknown) => this.warn('could not publish a cancellation (the call ends on its own or at its timeout)', error));
  }

  subscribeCancels(listener: (notice: McpCancelNotice) => void): () => void {
    // A wrapper of its own, so that one function subscribed twice is heard twice and unsubscribed once.
    const entry = (notice: McpCancelNotice) => listener(notice);
    this.cancelListeners.add(entry);
    if (!this.subscriber && !this.closed) this.startSubscriber();
    return () => {
      this.cancelListeners.delete(entry);
    };
  }

  /** Resolves once the cancellation channel is subscribed (or that failed): for tests and hosts that want to wait. */
  async ready(): Promise<void> {
    await this.subscribed;
  }

  private startSubscriber(): void {
    const subscriber = duplicateForSubscribing(this.connection.redis, 'mcp-cancel');
    this.subscriber = subscriber;
    subscriber.on('error', (error: unknown) => this.warn('the cancellation subscriber lost Redis (it reconnects)', error));
    subscriber.on('node error', () => {});
    subscriber.on('message', (channel: string, message: string) => {
      if (channel !== this.cancelChannel) return;
      const notice = parseCancelNotice(message);
      if (!notice) return this.warn('ignored a malformed message on the cancellation channel', undefined);
      for (const listener of this.cancelListeners) {
        try {
          listener(notice);
        } catch (error) {
          this.warn('a cancellation listener threw', error);
        }
      }
    });
    this.subscribed = subscriber.subscribe(this.cancelChannel).then(
      () => {},
      (error: unknown) => {
        if (!this.closed) this.warn('could not subscribe to cancellations', error);
      },
    );
  }

  private warn(message: string, error: unknown): void {
    const now = Date.now();
    if (now - this.lastWarning < WARN_EVERY_MS) return;
    this.lastWarning = now;
    this.logger.warn(`RedisMcpSessionStore: ${message}`, error === undefined ? undefined : { error: error instanceof Error ? error.message : String(error) });
  }

  private key(id: string): string {
    return `${this.prefix}mcp-session:${id}`;
  }

  private indexKey(keyId: string): string {
    return `${this.prefix}mcp-sessions:${encodeURIComponent(keyId)}`;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.cancelListeners.clear();
    const subscriber = this.subscriber;
    this.subscriber = undefined;
    // A subscriber holds no writes to finish: dropped at once (QUIT would wait for a Redis that is down).
    subscriber?.disconnect();
    await this.connection.close();
  }
}
