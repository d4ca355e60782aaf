import { createHash, randomUUID } from 'node:crypto';
import type { RedisConnectionOptions } from '../redis/connection.js';
import { FailFastRedis } from '../redis/fail-fast-redis.js';
import { type BudgetAccount, type BudgetState, budgetWindow, isExhausted, NANO_USD_PER_USD, toNanoUsd } from './budget.js';
import type { AdmitResult, BudgetCheck, KeyLimits, LimitEngine, LimitEngineOptions, LimitReason, Settlement } from './limit-engine.js';
import { budgetRetryAfterMs, CONCURRENCY_RETRY_AFTER_MS, countable, counterStates, resolveLimitEngineOptions } from './memory-limit-engine.js';

export interface RedisLimitEngineOptions extends LimitEngineOptions, RedisConnectionOptions {
  /** Prefix of every key. Default `infergate:`. */
  keyPrefix?: string | undefined;
  /**
   * How long `admit`, `settle` and `spent` wait for Redis before rejecting, in ms. The gateway
   * then fails open or closed (`policies.failOpen`) instead of holding the request. Default 1000.
   */
  timeoutMs?: number | undefined;
}

/**
 * Limit counters in Redis (through `ioredis`, an optional peer dependency), so that every gateway
 * process on one Redis enforces one combined limit. Import it from `infergate/redis`:
 *
 * ```ts
 * import { RedisLimitEngine } from 'infergate/redis';
 * createGateway({ keys, policies: { limitEngine: new RedisLimitEngine({ url: process.env.REDIS_URL }) } });
 * ```
 *
 * Same semantics as `MemoryLimitEngine`. `admit` and `settle` are each one Lua script, so checks
 * and counts are atomic across processes. The scripts read the clock from Redis (`TIME`) and
 * ignore the `now` argument: windows then agree across instances whose clocks drift apart.
 *
 * Layout per key id, all under the `{key:<id>}` hash tag so one key's counters share a cluster
 * slot: `rate`, a hash of the current window (`w`, its index; `r`, requests; `t`, tokens) that
 * expires after the window; `slots`, a sorted set of slot ids scored by expiry (ms); `spent`, a
 * float counter that never expires.
 *
 * Dollar budgets are integer counters of billionths of a dollar, one per budget window, named
 * by the window: `{key:<id>}:budget:1d:20415`, `{group:<name>}:budget:month:2026-11`,
 * `…:budget:lifetime`. Each expires an hour after its window ends as this process sees it (a
 * relative `PEXPIRE`, so Redis's own clock does not matter; a lifetime one never expires). The
 * window comes from this process's clock (the key name must be known before the call), so
 * instances whose clocks differ disagree only for those seconds around the window's end. They
 * are read before the `admit` script and added to with `INCRBY` in `MULTI` at settle: a budget,
 * like `tokensPerMinute`, is checked before a request and counted after it, so the requests
 * already in flight when it runs out may overshoot it, each by its own cost.
 */
export class RedisLimitEngine implements LimitEngine {
  private readonly connection: FailFastRedis;
  private readonly prefix: string;
  private readonly windowMs: number;
  private readonly slotTtlMs: number;
  readonly supportsBudgets = true;

  constructor(options: RedisLimitEngineOptions) {
    if (!options) throw new TypeError('RedisLimitEngine: pass `client` (an ioredis client or cluster), `url`, `cluster` or `sentinel`');
    ({ windowMs: this.windowMs, slotTtlMs: this.slotTtlMs } = resolveLimitEngineOptions(options, 'RedisLimitEngine'));
    this.prefix = options.keyPrefix ?? 'infergate:';
    this.connection = new FailFastRedis({ ...options, timeoutMs: options.timeoutMs ?? 1000, owner: 'RedisLimitEngine' });
  }

  /** `now` is ignored: the script takes the time from Redis (see the class comment). */
  async admit(keyId: string, limits: KeyLimits, now: number, check?: BudgetCheck): Promise<AdmitResult> {
    const budgets = check ? await Promise.all(check.accounts.map((account) => this.budgetState(account, now))) : undefined;
    const spentBudget = check?.enforce ? budgets?.find(isExhausted) : undefined;
    const slot = limits.concurrentRequests !== undefined && !spentBudget ? randomUUID() : undefined;
    const [code, requests, tokens, resetMs] = (await this.run(ADMIT, keyId, [
      this.windowMs,
      this.slotTtlMs,
      limitArg(limits.requestsPerMinute),
      limitArg(limits.tokensPerMinute),
      limitArg(limits.concurrentRequests),
      limitArg(limits.quota),
      slot ?? '',
      spentBudget ? 1 : 0,
    ])) as [number, number, number, number];
    const states = { ...counterStates(limits, requests, tokens, resetMs), ...(budgets ? { budgets } : {}) };
    const reason = REASONS[code];
    if (!reason) return { allowed: true, slot, ...states };
    if (reason === 'budget') return { allowed: false, reason, retryAfterMs: budgetRetryAfterMs(spentBudget!, now), ...states };
    const retryAfterMs = reason === 'quota' ? 0 : reason === 'concurrency' ? CONCURRENCY_RETRY_AFTER_MS : resetMs;
    return { allowed: false, reason, retryAfterMs, ...states };
  }

  async settle(keyId: string, _limits: KeyLimits, settlement: Settlement, now: number): Promise<void> {
    const nanoUsd = toNanoUsd(settlement.usd ?? 0);
    await Promise.all([
      this.run(SETTLE, keyId, [this.windowMs, settlement.slot ?? '', Math.round(countable(settlement.tokens)), countable(settlement.cost)]),
      ...(nanoUsd > 0 ? (settlement.budgets ?? []).map((account) => this.addToBudget(account, nanoUsd, now)) : []),
    ]);
  }

  async budgetSpent(account: BudgetAccount, now: number): Promise<number> {
    return (await this.budgetState(account, now)).spentUsd;
  }

  private async budgetState(account: BudgetAccount, now: number): Promise<BudgetState> {
    const window = budgetWindow(account.period, now);
    const nanoUsd = await this.connection.call((redis) => redis.get(this.budgetKey(account, window.id)));
    return { account, spentUsd: Number(nanoUsd ?? 0) / NANO_USD_PER_USD, resetsAt: window.resetsAt };
  }

  /**
   * One `MULTI`: the counter and its expiry move together. The expiry is a duration (`PEXPIRE`),
   * not a time: Redis would judge an absolute one by its own clock, and delete at once a counter
   * whose window ended by Redis's clock but not by the caller's.
   */
  private async addToBudget(account: BudgetAccount, nanoUsd: number, now: number): Promise<void> {
    const window = budgetWindow(account.period, now);
    const key = this.budgetKey(account, window.id);
    const results = await this.connection.call((redis) => {
      const transaction = redis.multi().incrby(key, nanoUsd);
      if (window.resetsAt !== undefined) transaction.pexpire(key, Math.max(1, window.resetsAt - now) + BUDGET_GRACE_MS);
      return transaction.exec();
    });
    const failure = results?.find(([error]) => error)?.[0];
    if (failure || !results) throw failure ?? new Error('RedisLimitEngine: the budget transaction was aborted');
  }

  /** Under the key's hash tag (the slot of its other counters), or the group's own. */
  private budgetKey(account: BudgetAccount, window: string): string {
    return `${this.prefix}{${account.scope}:${account.owner}}:budget:${window}`;
  }

  async spent(keyId: string): Promise<number> {
    const spent = await this.connection.call((redis) => redis.get(this.keys(keyId)[2]));
    return spent ? Number(spent) : 0;
  }

  close(): Promise<void> {
    return this.connection.close();
  }

  /** KEYS `rate`, `slots`, `spent` of the key id. */
  private keys(keyId: string): [string, string, string] {
    const base = `${this.prefix}{key:${keyId}}:`;
    return [`${base}rate`, `${base}slots`, `${base}spent`];
  }

  /** Runs a script by its hash, sending its text only when Redis doesn't know it yet. */
  private run(script: Script, keyId: string, args: Array<string | number>): Promise<unknown> {
    const keys = this.keys(keyId);
    return this.connection.call(async (redis) => {
      try {
        return await redis.evalsha(script.sha, keys.length, ...keys, ...args);
      } catch (error) {
        if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
        return redis.eval(script.lua, keys.length, ...keys, ...args);
      }
    });
  }
}

/** A limit as a script argument: '' when unset (`tonumber('')` is nil in Lua). */
function limitArg(limit: number | undefined): string | number {
  return limit === undefined ? '' : limit;
}

/** The script's first reply: 0 admitted, else the index of the refusal reason. */
const REASONS: Record<number, LimitReason | undefined> = { 1: 'quota', 2: 'concurrency', 3: 'requests', 4: 'tokens', 5: 'budget' };

/** A budget counter outlives its window by this much, for instances whose clocks lag behind. */
const BUDGET_GRACE_MS = 3_600_000;

interface Script {
  lua: string;
  sha: string;
}

function script(lua: string): Script {
  return { lua, sha: createHash('sha1').update(lua).digest('hex') };
}

/** Lets Redis < 5 replicate writes made after `TIME` (later versions always do); first in a script. */
const REPLICATE_EFFECTS = `if redis.replicate_commands then redis.replicate_commands() end`;

/** Both scripts count in the window of Redis's clock. Needs KEYS[1] = rate, ARGV[1] = windowMs. */
const CLOCK = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local windowMs = tonumber(ARGV[1])
local window = math.floor(now / windowMs)
local stored = tonumber(redis.call('HGET', KEYS[1], 'w'))
-- A clock stepping back keeps the newer window rather than resetting it twice.
local current = stored ~= nil and stored >= window
if current then window = stored end
local resetMs = (window + 1) * windowMs - now`;

/**
 * KEYS: rate, slots, spent. ARGV: windowMs, slotTtlMs, requests, tokens, concurrency and quota
 * limits ('' when unset), slot id, 1 when a budget is spent (read just before: refuse, count
 * nothing). Returns {reason (0 = admitted), requests, tokens, resetMs}.
 */
const ADMIT = script(`${REPLICATE_EFFECTS}
${CLOCK}
local requests, tokens = 0, 0
if current then
  requests = tonumber(redis.call('HGET', KEYS[1], 'r')) or 0
  tokens = tonumber(redis.call('HGET', KEYS[1], 't')) or 0
end
if ARGV[8] == '1' then return {5, requests, tokens, resetMs} end
local rpm, tpm, concurrency, quota = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
if quota and (tonumber(redis.call('GET', KEYS[3])) or 0) >= quota then return {1, requests, tokens, resetMs} end
if concurrency then
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
  if redis.call('ZCARD', KEYS[2]) >= concurrency then return {2, requests, tokens, resetMs} end
end
if rpm and requests >= rpm then return {3, requests, tokens, resetMs} end
if tpm and tokens >= tpm then return {4, requests, tokens, resetMs} end
if current then
  redis.call('HINCRBY', KEYS[1], 'r', 1)
else
  redis.call('HSET', KEYS[1], 'w', window, 'r', 1, 't', 0)
end
redis.call('PEXPIRE', KEYS[1], resetMs + 1000)
if concurrency then
  local ttl = tonumber(ARGV[2])
  redis.call('ZADD', KEYS[2], now + ttl, ARGV[7])
  redis.call('PEXPIRE', KEYS[2], ttl)
end
return {0, requests + 1, tokens, resetMs}`);

/** KEYS: rate, slots, spent. ARGV: windowMs, slot id ('' for none), tokens, cost. */
const SETTLE = script(`${REPLICATE_EFFECTS}
if ARGV[2] ~= '' then redis.call('ZREM', KEYS[2], ARGV[2]) end
local tokens = tonumber(ARGV[3])
if tokens > 0 then
${CLOCK}
  if current then
    redis.call('HINCRBY', KEYS[1], 't', tokens)
  else
    redis.call('HSET', KEYS[1], 'w', window, 'r', 0, 't', tokens)
  end
  redis.call('PEXPIRE', KEYS[1], resetMs + 1000)
end
if tonumber(ARGV[4]) > 0 then redis.call('INCRBYFLOAT', KEYS[3], ARGV[4]) end
return 1`);
