import { Redis } from 'ioredis';

export interface FailFastRedisOptions {
  /** A connected ioredis client to use (not closed by `close`), or… */
  client?: Redis | undefined;
  /** …a Redis URL; the connection is opened here and closed by `close`. */
  url?: string | undefined;
  /** Longest wait for any call, in ms. */
  timeoutMs: number;
  /** Who is calling, for messages (`RedisLimitEngine`). */
  owner: string;
}

/**
 * A Redis connection for the request path, where a slow answer is worse than none: while Redis
 * is down every call rejects within `timeoutMs`, so the gateway can fail open or closed at once.
 * Its own client has no offline queue (whose commands would run late, counting requests already
 * answered) and no retries; a client passed in is bounded by the same timeout.
 */
export class FailFastRedis {
  readonly redis: Redis;
  private readonly ownsClient: boolean;
  private readonly timeoutMs: number;
  private readonly owner: string;
  /** Settles once our own client first connects or fails to, so early calls don't fail needlessly. */
  private readonly firstConnection: Promise<void> | undefined;

  constructor(options: FailFastRedisOptions) {
    if (!options.client && !options.url) throw new TypeError(`${options.owner}: pass \`client\` (an ioredis client) or \`url\``);
    if (!Number.isFinite(options.timeoutMs) || options.timeoutMs <= 0) throw new TypeError(`${options.owner}: timeoutMs must be a positive number (ms)`);
    this.timeoutMs = options.timeoutMs;
    this.owner = options.owner;
    this.ownsClient = !options.client;
    if (options.client) {
      this.redis = options.client;
      return;
    }
    const redis = new Redis(options.url!, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectTimeout: this.timeoutMs,
      commandTimeout: this.timeoutMs,
    });
    // Failures reach callers as rejected calls; without a listener ioredis prints every one.
    redis.on('error', () => {});
    this.firstConnection = new Promise((resolve) => {
      const settled = () => {
        for (const event of ['ready', 'close', 'end']) redis.off(event, settled);
        resolve();
      };
      for (const event of ['ready', 'close', 'end']) redis.once(event, settled);
    });
    this.redis = redis;
  }

  /** Runs Redis commands after the first connection attempt, rejecting after `timeoutMs`. */
  call<T>(run: (redis: Redis) => Promise<T>): Promise<T> {
    const answer = this.firstConnection ? this.firstConnection.then(() => run(this.redis)) : run(this.redis);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${this.owner}: Redis did not answer within ${this.timeoutMs} ms`)), this.timeoutMs);
    });
    return Promise.race([answer, timeout]).finally(() => clearTimeout(timer));
  }

  async close(): Promise<void> {
    if (this.ownsClient) await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
