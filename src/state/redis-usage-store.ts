import type { RedisConnectionOptions } from '../redis/connection.js';
import { FailFastRedis } from '../redis/fail-fast-redis.js';
import {
  daysBetween,
  MAX_MODELS_PER_DAY,
  OTHER_MODELS,
  sortRows,
  USAGE_RETENTION_DAYS,
  type UsageRow,
  type UsageStore,
  type UsageTotals,
} from './usage-store.js';

export interface RedisUsageStoreOptions extends RedisConnectionOptions {
  /** Prefix of every key. Default `infergate:`. */
  keyPrefix?: string | undefined;
  /** How long a day's usage is kept after its last request, in seconds. Default 400 days. */
  ttlSeconds?: number | undefined;
  /** How long a write or a read waits for Redis before rejecting, in ms. Default 2000. */
  timeoutMs?: number | undefined;
  /** Most models one key's day keeps apart (the rest are added to `(other models)`). Default 1000. */
  maxModelsPerDay?: number | undefined;
}

/**
 * One request's totals added to its key's day, atomically: to its model's four fields, or to
 * `(other models)` once the day holds the most models it keeps apart (counted in its `models`
 * field, which `list` passes over); then the day's expiry.
 * KEYS[1] the day's hash; ARGV: model, requests, input tokens, output tokens, dollars, ttl
 * seconds, most models, the overflow name.
 */
const ADD_SCRIPT = `
local model = ARGV[1]
if redis.call('HEXISTS', KEYS[1], 'requests|' .. model) == 0 then
  if tonumber(redis.call('HGET', KEYS[1], 'models') or '0') >= tonumber(ARGV[7]) then
    model = ARGV[8]
  else
    redis.call('HINCRBY', KEYS[1], 'models', 1)
  end
end
redis.call('HINCRBY', KEYS[1], 'requests|' .. model, ARGV[2])
redis.call('HINCRBY', KEYS[1], 'input_tokens|' .. model, ARGV[3])
redis.call('HINCRBY', KEYS[1], 'output_tokens|' .. model, ARGV[4])
if ARGV[5] ~= '0' then redis.call('HINCRBYFLOAT', KEYS[1], 'cost_usd|' .. model, ARGV[5]) end
redis.call('EXPIRE', KEYS[1], ARGV[6])
return 1
`;

/** The hash fields of one model: `<field>|<model id>` (a field name holds no `|`; a model id may hold anything). */
const fields = ['requests', 'input_tokens', 'output_tokens', 'cost_usd'] as const;

/**
 * Usage in Redis (through `ioredis`), shared by every gateway instance and kept across restarts.
 * Import it from `infergate/redis`:
 *
 * ```ts
 * import { RedisUsageStore } from 'infergate/redis';
 * createGateway({ keys, models, usageStore: new RedisUsageStore({ url: process.env.REDIS_URL }) });
 * ```
 *
 * Layout: one hash per key and UTC day, `<prefix>usage:<url-encoded key id>:<YYYY-MM-DD>`, with
 * four fields per model (`requests|<model>`, `input_tokens|…`, `output_tokens|…`, `cost_usd|…`)
 * added to with HINCRBY / HINCRBYFLOAT in one script, so concurrent instances never lose a request
 * (past `maxModelsPerDay` models, a day adds the rest to `(other models)`);
 * the hash expires `ttlSeconds` after its last write. A read is one HGETALL per day, sent at once;
 * each day is its own key (no hash tag), so a Redis Cluster spreads them over its shards.
 */
export class RedisUsageStore implements UsageStore {
  private readonly connection: FailFastRedis;
  private readonly prefix: string;
  private readonly ttlSeconds: number;
  private readonly maxModelsPerDay: number;

  constructor(options: RedisUsageStoreOptions) {
    if (!options) throw new TypeError('RedisUsageStore: pass `client` (an ioredis client or cluster), `url`, `cluster` or `sentinel`');
    this.prefix = options.keyPrefix ?? 'infergate:';
    this.ttlSeconds = options.ttlSeconds ?? USAGE_RETENTION_DAYS * 86_400;
    if (!Number.isInteger(this.ttlSeconds) || this.ttlSeconds < 1) throw new TypeError('RedisUsageStore: ttlSeconds must be a positive integer');
    this.maxModelsPerDay = options.maxModelsPerDay ?? MAX_MODELS_PER_DAY;
    if (!Number.isInteger(this.maxModelsPerDay) || this.maxModelsPerDay < 1) throw new TypeError('RedisUsageStore: maxModelsPerDay must be a positive integer');
    this.connection = new FailFastRedis({ ...options, timeoutMs: options.timeoutMs ?? 2000, owner: 'RedisUsageStore' });
  }

  async add(keyId: string, date: string, model: string, totals: UsageTotals): Promise<void> {
    const key = this.dayKey(keyId, date);
    const { requests, inputTokens, outputTokens, costUsd } = totals;
    const counts = [requests, inputTokens, outputTokens].map((count) => String(Math.round(count)));
    await this.connection.call((redis) =>
      redis.eval(ADD_SCRIPT, 1, key, model, ...counts, String(costUsd), String(this.ttlSeconds), String(this.maxModelsPerDay), OTHER_MODELS),
    );
  }

  async list(keyId: string, start: string, end: string): Promise<UsageRow[]> {
    const days = daysBetween(start, end);
    if (days.length === 0) return [];
    // One HGETALL per day, sent at once: not a pipeline, whose keys would have to share a cluster slot.
    const hashes = await this.connection.call((redis) => Promise.all(days.map((day) => redis.hgetall(this.dayKey(keyId, day)))));
    const rows: UsageRow[] = [];
    days.forEach((date, index) => {
      const hash = hashes[index] ?? {};
      const byModel = new Map<string, UsageRow>();
      for (const [field, value] of Object.entries(hash)) {
        const bar = field.indexOf('|');
        const name = field.slice(0, bar) as (typeof fields)[number];
        const model = field.slice(bar + 1);
        if (bar < 0 || !fields.includes(name)) continue;
        let row = byModel.get(model);
        if (!row) byModel.set(model, (row = { date, model, requests: 0, inputTokens: 0, outputTokens: 0, costUsd: 0 }));
        const amount = Number(value);
        if (name === 'requests') row.requests = amount;
        else if (name === 'input_tokens') row.inputTokens = amount;
        else if (name === 'output_tokens') row.outputTokens = amount;
        else row.costUsd = amount;
      }
      rows.push(...byModel.values());
    });
    return sortRows(rows);
  }

  private dayKey(keyId: string, date: string): string {
    return `${this.prefix}usage:${encodeURIComponent(keyId)}:${date}`;
  }

  close(): Promise<void> {
    return this.connection.close();
  }
}
