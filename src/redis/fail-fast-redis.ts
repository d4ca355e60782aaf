import { openRedis, type RedisClient, type RedisConnectionOptions } from './connection.js';

export interface FailFastRedisOptions extends RedisConnectionOptions {
  /** Longest wait for any call, in ms. */
  timeoutMs: number;
  /** Who is calling, for messages (`RedisLimitEngine`). */
  owner: string;
}

/** Events after which our own client has connected or failed to (Sentinel reports a failure only as `error`). */
const FIRST_CONNECTION_SETTLED = ['ready', 'close', 'end', 'error'];

/**
 * A Redis connection for the request path, where a slow answer is worse than none: while Redis
 * is down every call rejects within `timeoutMs`, so the gateway can fail open or closed at once.
 * Its own client (single node, cluster or Sentinel) has no offline queue (whose commands would
 * run late, counting requests already answered) and no retries; a client passed in is bounded
 * by the same timeout.
 */
export class FailFastRedis {
  readonly redis: RedisClient;
  private readonly ownsClient: boolean;
  private readonly timeoutMs: number;
  private readonly owner: string;
  /** Settles once our own client first connects or fails to, so early calls don't fail needlessly. */
  private readonly firstConnection: Promise<void> | undefined;

  constructor(options: FailFastRedisOptions) {
    if (!Number.isFinite(options.timeoutMs) || options.timeoutMs <= 0) throw new TypeError(`${options.owner}: timeoutMs must be a positive number (ms)`);
    this.timeoutMs = options.timeoutMs;
    this.owner = options.owner;
    const { redis, owned } = openRedis(options, options.owner, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectTimeout: this.timeoutMs,
      commandTimeout: this.timeoutMs,
    });
    this.redis = redis;
    this.ownsClient = owned;
    if (!owned) return;
    // Failures reach callers as rejected calls; without a listener ioredis prints every one
    // (a cluster reports its nodes' failures as `node error`).
    redis.on('error', () => {});
    redis.on('node error', () => {});
    this.firstConnection = new Promise((resolve) => {
      const settled = () => {
        for (const event of FIRST_CONNECTION_SETTLED) redis.off(event, settled);
        resolve();
      };
      for (const event of FIRST_CONNECTION_SETTLED) redis.once(event, settled);
    });
  }

  /** Runs Redis commands after the first connection attempt, rejecting after `timeoutMs`. */
  call<T>(run: (redis: RedisClient) => Promise<T>): Promise<T> {
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
