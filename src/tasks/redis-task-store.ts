import { openRedis, type RedisClient, type RedisConnectionOptions } from '../redis/connection.js';
import { isFinal, type TaskStore, type VideoTaskRecord } from './task-store.js';

export interface RedisTaskStoreOptions extends RedisConnectionOptions {
  /** Prefix of every key. Default `infergate:`. */
  keyPrefix?: string | undefined;
  /** How long a task is kept after its last write, in seconds. Default 7 days. */
  ttlSeconds?: number | undefined;
}

/**
 * Video tasks in Redis (through `ioredis`, an optional peer dependency), so that several gateway
 * instances share them and a restart loses none. Import it from `infergate/redis`:
 *
 * ```ts
 * import { RedisTaskStore } from 'infergate/redis';
 * createGateway({ keys, taskStore: new RedisTaskStore({ url: process.env.REDIS_URL }) });
 * ```
 *
 * Layout: one hash per task (`rev` and `json`) and a sorted set of unfinished task ids scored by
 * creation time (for the poller). Creation and compare-and-set updates are Lua scripts, so each
 * write is atomic. Every key carries the `{tasks}` hash tag so the scripts also run on a cluster.
 */
export class RedisTaskStore implements TaskStore {
  private readonly redis: RedisClient;
  private readonly ownsClient: boolean;
  private readonly prefix: string;
  private readonly ttlSeconds: number;

  constructor(options: RedisTaskStoreOptions) {
    if (!options) throw new TypeError('RedisTaskStore: pass `client` (an ioredis client or cluster), `url`, `cluster` or `sentinel`');
    ({ redis: this.redis, owned: this.ownsClient } = openRedis(options, 'RedisTaskStore', { maxRetriesPerRequest: 3 }));
    this.prefix = `${options.keyPrefix ?? 'infergate:'}{tasks}:`;
    this.ttlSeconds = options.ttlSeconds ?? 7 * 24 * 3600;
    if (!Number.isInteger(this.ttlSeconds) || this.ttlSeconds < 1) throw new TypeError('RedisTaskStore: ttlSeconds must be a positive integer');
  }

  async get(id: string): Promise<VideoTaskRecord | undefined> {
    const json = await this.redis.hget(this.taskKey(id), 'json');
    return json ? (JSON.parse(json) as VideoTaskRecord) : undefined;
  }

  async create(task: VideoTaskRecord): Promise<void> {
    const created = await this.redis.eval(
      CREATE,
      2,
      this.taskKey(task.id),
      this.pendingKey(),
      String(task.revision),
      JSON.stringify(task),
      String(this.ttlSeconds),
      isFinal(task.status) ? '1' : '0',
      String(task.createdAt),
      task.id,
    );
    if (created !== 1) throw new Error(`A task with id ${task.id} exists already`);
  }

  async update(task: VideoTaskRecord): Promise<boolean> {
    const updated = await this.redis.eval(
      UPDATE,
      2,
      this.taskKey(task.id),
      this.pendingKey(),
      String(task.revision - 1),
      String(task.revision),
      JSON.stringify(task),
      String(this.ttlSeconds),
      isFinal(task.status) ? '1' : '0',
      task.id,
    );
    return updated === 1;
  }

  async pending(limit: number): Promise<string[]> {
    // Ids whose task expired before it finished are dropped on the way.
    await this.redis.zremrangebyscore(this.pendingKey(), '-inf', String(Math.floor(Date.now() / 1000) - this.ttlSeconds));
    return this.redis.zrange(this.pendingKey(), '0', String(Math.max(0, limit - 1)));
  }

  async close(): Promise<void> {
    if (this.ownsClient) await this.redis.quit().catch(() => this.redis.disconnect());
  }

  private taskKey(id: string): string {
    return `${this.prefix}task:${id}`;
  }

  private pendingKey(): string {
    return `${this.prefix}pending`;
  }
}

/** KEYS: task, pending. ARGV: revision, json, ttl, final, score, id. */
const CREATE = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'rev', ARGV[1], 'json', ARGV[2])
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[3]))
if ARGV[4] == '0' then redis.call('ZADD', KEYS[2], tonumber(ARGV[5]), ARGV[6]) end
return 1`;

/** KEYS: task, pending. ARGV: expected revision, new revision, json, ttl, final, id. */
const UPDATE = `
if redis.call('HGET', KEYS[1], 'rev') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'rev', ARGV[2], 'json', ARGV[3])
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[4]))
if ARGV[5] == '1' then redis.call('ZREM', KEYS[2], ARGV[6]) end
return 1`;
