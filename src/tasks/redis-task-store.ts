import { createHash } from 'node:crypto';
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
 * Layout: one hash per task (`rev` and `json`) and sorted sets of unfinished task ids scored by
 * creation time (for the poller). Creation and compare-and-set updates are Lua scripts, so each
 * write is atomic. A task and the set that lists it share a hash tag, one of `BUCKETS` picked by
 * the task id (`{tasks:0}` … `{tasks:15}`), so the scripts run on a cluster and the tasks spread
 * over its shards; `pending` reads every bucket. Tasks written under the single `{tasks}` tag of
 * earlier versions are still read, listed and updated where they are, until they expire.
 */
export class RedisTaskStore implements TaskStore {
  private readonly redis: RedisClient;
  private readonly ownsClient: boolean;
  private readonly prefix: string;
  private readonly ttlSeconds: number;

  constructor(options: RedisTaskStoreOptions) {
    if (!options) throw new TypeError('RedisTaskStore: pass `client` (an ioredis client or cluster), `url`, `cluster` or `sentinel`');
    ({ redis: this.redis, owned: this.ownsClient } = openRedis(options, 'RedisTaskStore', { maxRetriesPerRequest: 3 }));
    this.prefix = options.keyPrefix ?? 'infergate:';
    this.ttlSeconds = options.ttlSeconds ?? 7 * 24 * 3600;
    if (!Number.isInteger(this.ttlSeconds) || this.ttlSeconds < 1) throw new TypeError('RedisTaskStore: ttlSeconds must be a positive integer');
  }

  async get(id: string): Promise<VideoTaskRecord | undefined> {
    const json = (await this.redis.hget(this.taskKey(this.bucketOf(id), id), 'json')) ?? (await this.redis.hget(this.taskKey(LEGACY, id), 'json'));
    return json ? (JSON.parse(json) as VideoTaskRecord) : undefined;
  }

  async create(task: VideoTaskRecord): Promise<void> {
    const bucket = this.bucketOf(task.id);
    const created = await this.redis.eval(
      CREATE,
      2,
      this.taskKey(bucket, task.id),
      this.pendingKey(bucket),
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
    const write = (bucket: string) =>
      this.redis.eval(
        UPDATE,
        2,
        this.taskKey(bucket, task.id),
        this.pendingKey(bucket),
        String(task.revision - 1),
        String(task.revision),
        JSON.stringify(task),
        String(this.ttlSeconds),
        isFinal(task.status) ? '1' : '0',
        task.id,
      );
    // A refused write may be a task of the earlier layout: tried there too.
    return (await write(this.bucketOf(task.id))) === 1 || (await write(LEGACY)) === 1;
  }

  async pending(limit: number): Promise<string[]> {
    const count = Math.max(0, limit - 1);
    const expiredBefore = String(Math.floor(Date.now() / 1000) - this.ttlSeconds);
    // Each bucket's oldest `limit`, merged: the oldest `limit` of all. Ids whose task expired
    // before it finished are dropped on the way.
    const buckets = await Promise.all(
      [...BUCKET_TAGS, LEGACY].map(async (bucket) => {
        await this.redis.zremrangebyscore(this.pendingKey(bucket), '-inf', expiredBefore);
        return this.redis.zrange(this.pendingKey(bucket), '0', String(count), 'WITHSCORES');
      }),
    );
    const entries: [id: string, score: number][] = [];
    for (const flat of buckets) for (let index = 0; index < flat.length; index += 2) entries.push([flat[index]!, Number(flat[index + 1])]);
    entries.sort(([a, scoreA], [b, scoreB]) => scoreA - scoreB || (a < b ? -1 : a > b ? 1 : 0));
    return entries.slice(0, limit).map(([id]) => id);
  }

  async close(): Promise<void> {
    if (this.ownsClient) await this.redis.quit().catch(() => this.redis.disconnect());
  }

  /** The hash tag of a task's bucket: a hash of its id, so every instance finds it. */
  private bucketOf(id: string): string {
    return BUCKET_TAGS[createHash('sha1').update(id).digest().readUInt32BE(0) % BUCKETS]!;
  }

  private taskKey(bucket: string, id: string): string {
    return `${this.prefix}${bucket}:task:${id}`;
  }

  private pendingKey(bucket: string): string {
    return `${this.prefix}${bucket}:pending`;
  }
}

/** How many hash tags the tasks spread over: enough for a cluster's shards, few for `pending` to read. */
const BUCKETS = 16;
const BUCKET_TAGS = Array.from({ length: BUCKETS }, (_, index) => `{tasks:${index}}`);
/** The one tag of the earlier layout. */
const LEGACY = '{tasks}';

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
