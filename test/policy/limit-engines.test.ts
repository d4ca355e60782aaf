import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { AdmitResult, KeyLimits, LimitEngine, LimitEngineOptions } from '../../src/policy/limit-engine.js';
import { MemoryLimitEngine } from '../../src/policy/memory-limit-engine.js';
import { RedisLimitEngine } from '../../src/policy/redis-limit-engine.js';
import { freePort } from '../media/helpers.js';
import { redisTargets } from '../redis/targets.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const uniqueKey = () => `key_${randomBytes(6).toString('hex')}`;
/** Windows so long that no test crosses a boundary, unless it means to. */
const HOUR = 3_600_000;

/** Waits until a fresh window of `windowMs` has just begun (windows are aligned to the epoch). */
async function windowStart(windowMs: number): Promise<void> {
  await sleep(windowMs - (Date.now() % windowMs) + 10);
}

function admitted(result: AdmitResult): string | undefined {
  expect(result.allowed).toBe(true);
  return result.allowed ? result.slot : undefined;
}

function refusal(result: AdmitResult): Extract<AdmitResult, { allowed: false }> {
  if (result.allowed) throw new Error(`expected a refusal, got ${JSON.stringify(result)}`);
  return result;
}

/** The same suite for every engine: both must answer alike. */
function engineSuite(name: string, open: (options: LimitEngineOptions) => LimitEngine) {
  describe(`LimitEngine: ${name}`, () => {
    const engines: LimitEngine[] = [];
    const engine = (options: LimitEngineOptions = {}) => {
      const opened = open({ windowMs: HOUR, ...options });
      engines.push(opened);
      return opened;
    };
    afterAll(async () => {
      for (const opened of engines) await opened.close?.();
    });

    it('refuses the request past requestsPerMinute until the next window', async () => {
      const limits = engine({ windowMs: 1000 });
      const key = uniqueKey();
      const rpm = { requestsPerMinute: 3 };
      await windowStart(1000);
      for (const remaining of [2, 1, 0]) {
        const result = await limits.admit(key, rpm, Date.now());
        admitted(result);
        expect(result.requests).toMatchObject({ limit: 3, remaining });
      }
      const refused = refusal(await limits.admit(key, rpm, Date.now()));
      expect(refused).toMatchObject({ allowed: false, reason: 'requests', requests: { limit: 3, remaining: 0 } });
      expect(refused.retryAfterMs).toBeGreaterThan(0);
      expect(refused.retryAfterMs).toBeLessThanOrEqual(1000);
      expect(refused.requests!.resetMs).toBe(refused.retryAfterMs);

      await sleep(refused.retryAfterMs + 20);
      const next = await limits.admit(key, rpm, Date.now());
      admitted(next);
      expect(next.requests).toMatchObject({ limit: 3, remaining: 2 });
    });

    it('counts tokens at settle and refuses once tokensPerMinute is used up', async () => {
      const limits = engine();
      const key = uniqueKey();
      const tpm = { tokensPerMinute: 100 };
      const first = await limits.admit(key, tpm, Date.now());
      admitted(first);
      expect(first.tokens).toMatchObject({ limit: 100, remaining: 100 });
      await limits.settle(key, tpm, { tokens: 60, cost: 0 }, Date.now());
      const second = await limits.admit(key, tpm, Date.now());
      admitted(second);
      expect(second.tokens).toMatchObject({ limit: 100, remaining: 40 });
      // Tokens are checked before a request and counted after: the one in flight may overshoot.
      await limits.settle(key, tpm, { tokens: 75, cost: 0 }, Date.now());
      const refused = refusal(await limits.admit(key, tpm, Date.now()));
      expect(refused).toMatchObject({ allowed: false, reason: 'tokens', tokens: { limit: 100, remaining: 0 } });
      expect(refused.retryAfterMs).toBeGreaterThan(0);
      expect(refused.retryAfterMs).toBeLessThanOrEqual(HOUR);
    });

    it('holds concurrentRequests slots until settle, and settling twice frees one slot', async () => {
      const limits = engine();
      const key = uniqueKey();
      const concurrency = { concurrentRequests: 2 };
      const a = admitted(await limits.admit(key, concurrency, Date.now()));
      const b = admitted(await limits.admit(key, concurrency, Date.now()));
      expect(a).toEqual(expect.any(String));
      expect(b).toEqual(expect.any(String));
      expect(a).not.toBe(b);
      expect(await limits.admit(key, concurrency, Date.now())).toEqual({ allowed: false, reason: 'concurrency', retryAfterMs: 1000 });

      await limits.settle(key, concurrency, { slot: a, tokens: 0, cost: 0 }, Date.now());
      admitted(await limits.admit(key, concurrency, Date.now()));
      await limits.settle(key, concurrency, { slot: a, tokens: 0, cost: 0 }, Date.now());
      expect(await limits.admit(key, concurrency, Date.now())).toMatchObject({ allowed: false, reason: 'concurrency' });
    });

    it('drops a slot never given back after slotTtlMs', async () => {
      const limits = engine({ slotTtlMs: 200 });
      const key = uniqueKey();
      const one = { concurrentRequests: 1 };
      admitted(await limits.admit(key, one, Date.now()));
      expect(await limits.admit(key, one, Date.now())).toMatchObject({ allowed: false, reason: 'concurrency' });
      await sleep(300);
      admitted(await limits.admit(key, one, Date.now()));
    });

    it('counts spend at settle and refuses once the quota is spent', async () => {
      const limits = engine();
      const key = uniqueKey();
      const quota = { quota: 100 };
      expect(await limits.spent(key)).toBe(0);
      admitted(await limits.admit(key, quota, Date.now()));
      await limits.settle(key, quota, { tokens: 0, cost: 60 }, Date.now());
      expect(await limits.spent(key)).toBe(60);
      admitted(await limits.admit(key, quota, Date.now()));
      await limits.settle(key, quota, { tokens: 0, cost: 40.5 }, Date.now());
      expect(await limits.spent(key)).toBeCloseTo(100.5);
      expect(await limits.admit(key, quota, Date.now())).toEqual({ allowed: false, reason: 'quota', retryAfterMs: 0 });
      // Spend never expires with the windows, and other keys have their own.
      expect(await limits.spent(uniqueKey())).toBe(0);
    });

    it('counts nothing for a refused request: no request, no slot', async () => {
      const limits = engine();
      const key = uniqueKey();
      const both = { requestsPerMinute: 5, concurrentRequests: 1 };
      const slot = admitted(await limits.admit(key, both, Date.now()));
      for (let attempt = 0; attempt < 3; attempt++) {
        expect(await limits.admit(key, both, Date.now())).toMatchObject({ allowed: false, reason: 'concurrency', requests: { limit: 5, remaining: 4 } });
      }
      await limits.settle(key, both, { slot, tokens: 0, cost: 0 }, Date.now());
      expect((await limits.admit(key, both, Date.now())).requests).toMatchObject({ remaining: 3 });

      // Refused on requests: the refusals took no slot either.
      const other = uniqueKey();
      const strict = { requestsPerMinute: 1, concurrentRequests: 2 };
      admitted(await limits.admit(other, strict, Date.now()));
      for (let attempt = 0; attempt < 3; attempt++) expect(await limits.admit(other, strict, Date.now())).toMatchObject({ allowed: false, reason: 'requests' });
      const slotsOnly = { concurrentRequests: 2 };
      admitted(await limits.admit(other, slotsOnly, Date.now()));
      expect(await limits.admit(other, slotsOnly, Date.now())).toMatchObject({ allowed: false, reason: 'concurrency' });
    });

    it('reports the first refusal in order quota, concurrency, requests, tokens', async () => {
      const limits = engine();
      const key = uniqueKey();
      const all: KeyLimits = { quota: 10, concurrentRequests: 1, requestsPerMinute: 1, tokensPerMinute: 10 };
      const slot = admitted(await limits.admit(key, all, Date.now()));
      await limits.settle(key, all, { tokens: 10, cost: 0 }, Date.now());
      // Slot held, one request counted, tokens used up: concurrency comes first.
      expect(await limits.admit(key, all, Date.now())).toMatchObject({ reason: 'concurrency' });
      await limits.settle(key, all, { slot, tokens: 0, cost: 0 }, Date.now());
      expect(await limits.admit(key, all, Date.now())).toMatchObject({ reason: 'requests' });
      expect(await limits.admit(key, { ...all, requestsPerMinute: 2 }, Date.now())).toMatchObject({ reason: 'tokens' });
      await limits.settle(key, all, { tokens: 0, cost: 10 }, Date.now());
      expect(await limits.admit(key, all, Date.now())).toMatchObject({ reason: 'quota', requests: { remaining: 0 }, tokens: { remaining: 0 } });
    });

    it('reports counter states only for the rate limits that are set', async () => {
      const limits = engine();
      const key = uniqueKey();
      const none = await limits.admit(key, { quota: 1000 }, Date.now());
      expect(none).toEqual({ allowed: true });
      const both = await limits.admit(key, { requestsPerMinute: 10, tokensPerMinute: 500 }, Date.now());
      // Requests were counted without a limit too, so the one above is in the window.
      expect(both).toMatchObject({ allowed: true, requests: { limit: 10, remaining: 8 }, tokens: { limit: 500, remaining: 500 } });
      expect(both.allowed && both.slot).toBeUndefined();
      for (const state of [both.requests!, both.tokens!]) {
        expect(state.resetMs).toBeGreaterThan(0);
        expect(state.resetMs).toBeLessThanOrEqual(HOUR);
      }
    });

    it('ignores usage that is not a finite positive amount', async () => {
      const limits = engine();
      const key = uniqueKey();
      const tpm = { tokensPerMinute: 10 };
      for (const amount of [Number.NaN, -5, Number.POSITIVE_INFINITY]) await limits.settle(key, tpm, { tokens: amount, cost: amount }, Date.now());
      expect((await limits.admit(key, tpm, Date.now())).tokens).toMatchObject({ remaining: 10 });
      expect(await limits.spent(key)).toBe(0);
    });

    it('admits exactly requestsPerMinute of many requests at once', async () => {
      const limits = engine();
      const key = uniqueKey();
      const results = await Promise.all(Array.from({ length: 200 }, () => limits.admit(key, { requestsPerMinute: 50 }, Date.now())));
      expect(results.filter((result) => result.allowed)).toHaveLength(50);
    });
  });
}

engineSuite('memory', (options) => new MemoryLimitEngine(options));

describe('MemoryLimitEngine', () => {
  it('keeps only what it must: old windows and idle keys are dropped', async () => {
    const limits = new MemoryLimitEngine({ windowMs: 1000, slotTtlMs: 500 });
    const keys = (limits as unknown as { keys: Map<string, unknown> }).keys;
    for (let index = 0; index < 100; index++) await limits.admit(`idle_${index}`, { requestsPerMinute: 5, concurrentRequests: 1 }, 10_000);
    await limits.settle('spender', {}, { tokens: 0, cost: 3 }, 10_000);
    expect(keys.size).toBe(101);
    // A later window: slots have expired, nothing else is left but the spend.
    await limits.admit('fresh', { requestsPerMinute: 5 }, 12_000);
    expect([...keys.keys()].sort()).toEqual(['fresh', 'spender']);
    expect(await limits.spent('spender')).toBe(3);
  });

  it('rejects bad options at construction', () => {
    expect(() => new MemoryLimitEngine({ windowMs: 0 })).toThrow(/windowMs/);
    expect(() => new MemoryLimitEngine({ slotTtlMs: 1.5 })).toThrow(/slotTtlMs/);
  });
});

const targets = await redisTargets();
const prefix = `infergate-test-${randomBytes(4).toString('hex')}:`;

describe.each(targets)('Redis ($name)', (target) => {
  const { connection } = target;
  afterAll(() => target.close(prefix));

  engineSuite(`redis ${target.name}`, (options) => new RedisLimitEngine({ ...connection, keyPrefix: prefix, ...options }));

  it('keeps one combined limit for two engines on two connections', async () => {
    const [a, b] = [target.client(), target.client()].map((client) => new RedisLimitEngine({ client, keyPrefix: prefix, windowMs: HOUR }));
    const key = uniqueKey();
    const admit = (engine: RedisLimitEngine) => engine.admit(key, { requestsPerMinute: 50 }, Date.now());
    const results = await Promise.all(Array.from({ length: 200 }, (_, index) => admit(index % 2 === 0 ? a! : b!)));
    expect(results.filter((result) => result.allowed)).toHaveLength(50);
  });

  it('keeps one combined limit for two OS processes', async () => {
    const root = fileURLToPath(new URL('../..', import.meta.url));
    const worker = fileURLToPath(new URL('./fixtures/admit-worker.ts', import.meta.url));
    const key = uniqueKey();
    const workers = [0, 1].map(() => {
      const child = spawn(process.execPath, ['--import', 'tsx', worker, JSON.stringify(connection), prefix, key, '80', '50'], {
        cwd: root,
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let output = '';
      let errors = '';
      child.stderr!.on('data', (chunk: Buffer) => (errors += chunk.toString()));
      const ready = new Promise<void>((resolve, reject) => {
        child.stdout!.on('data', (chunk: Buffer) => {
          output += chunk.toString();
          if (output.startsWith('ready\n')) resolve();
        });
        child.once('exit', (code) => reject(new Error(`admit worker exited with ${code}: ${errors}`)));
      });
      const done = new Promise<number>((resolve, reject) => {
        child.once('exit', (code) => {
          const line = output.split('\n').find((text) => text.startsWith('{'));
          if (code === 0 && line) resolve((JSON.parse(line) as { admitted: number }).admitted);
          else reject(new Error(`admit worker exited with ${code}: ${output}${errors}`));
        });
      });
      return { child, ready, done };
    });
    await Promise.all(workers.map((process) => process.ready));
    for (const { child } of workers) child.stdin!.write('go\n');
    const counts = await Promise.all(workers.map((process) => process.done));
    expect(counts[0]! + counts[1]!).toBe(50);
  }, 30_000);

  it('expires the rate window and slots, never the spend; keeps a key id on one hash tag', async () => {
    const limits = new RedisLimitEngine({ ...connection, keyPrefix: prefix, windowMs: 10_000, slotTtlMs: 60_000 });
    try {
      const key = uniqueKey();
      const slot = admitted(await limits.admit(key, { concurrentRequests: 1 }, Date.now()));
      await limits.settle(key, {}, { tokens: 5, cost: 2 }, Date.now());
      const raw = target.client();
      const base = `${prefix}{key:${key}}:`;
      expect((await target.keys(`${prefix}*${key}*`)).sort()).toEqual([`${base}rate`, `${base}slots`, `${base}spent`]);
      expect(await raw.pttl(`${base}rate`)).toBeGreaterThan(0);
      expect(await raw.pttl(`${base}rate`)).toBeLessThanOrEqual(11_000);
      expect(await raw.pttl(`${base}slots`)).toBeGreaterThan(50_000);
      expect(await raw.pttl(`${base}spent`)).toBe(-1);
      expect(await raw.zscore(`${base}slots`, slot!)).not.toBeNull();
    } finally {
      await limits.close();
    }
  });

  it('does not close a client it was given', async () => {
    const client = target.client();
    const limits = new RedisLimitEngine({ client, keyPrefix: prefix });
    await limits.admit(uniqueKey(), { requestsPerMinute: 1 }, Date.now());
    await limits.close();
    expect(await client.ping()).toBe('PONG');
  });
});

describe('RedisLimitEngine without Redis', () => {
  // How the connection fails fast is tested in test/redis/fail-fast-redis.test.ts; here, that every call goes through it.
  it('rejects every call quickly instead of hanging', async () => {
    const port = await freePort();
    const limits = new RedisLimitEngine({ url: `redis://127.0.0.1:${port}`, keyPrefix: prefix });
    try {
      for (const call of [
        () => limits.admit(uniqueKey(), { requestsPerMinute: 1 }, Date.now()),
        () => limits.settle(uniqueKey(), {}, { tokens: 1, cost: 1 }, Date.now()),
        () => limits.spent(uniqueKey()),
      ]) {
        const started = Date.now();
        await expect(call()).rejects.toThrow();
        expect(Date.now() - started).toBeLessThan(2000);
      }
    } finally {
      await limits.close();
    }
  });

  it('needs a client or a url', () => {
    expect(() => new RedisLimitEngine({})).toThrow(/client.*url/);
  });
});
