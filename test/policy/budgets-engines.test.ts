import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BudgetAccount, type BudgetPeriod, budgetWindow } from '../../src/policy/budget.js';
import type { AdmitResult, LimitEngine } from '../../src/policy/limit-engine.js';
import { MemoryLimitEngine } from '../../src/policy/memory-limit-engine.js';
import { RedisLimitEngine } from '../../src/policy/redis-limit-engine.js';
import type { RedisClient } from '../../src/redis/connection.js';
import { type RedisTarget, redisTargets } from '../redis/targets.js';

/**
 * Dollar budgets in both limit engines, on an injected clock: the budget windows come from the
 * `now` each call is given (the Redis engine too: its window is in the counter's key name, and its
 * expiry is a duration from that `now`), so a period's reset is shown without waiting for midnight,
 * and the fixed dates below do not age.
 */
const at = (iso: string) => Date.parse(iso);
const owner = () => `key_${randomBytes(6).toString('hex')}`;
const account = (usd: number, period?: BudgetPeriod, scope: 'key' | 'group' = 'key'): BudgetAccount => ({ scope, owner: owner(), usd, period });

function refusal(result: AdmitResult): Extract<AdmitResult, { allowed: false }> {
  if (result.allowed) throw new Error(`expected a refusal, got ${JSON.stringify(result)}`);
  return result;
}

describe('budget windows', () => {
  it('1d, 7d and 30d are fixed windows of UTC days from the epoch; month is the calendar month, UTC', () => {
    const now = at('2026-11-23T16:05:00Z');
    expect(budgetWindow('1d', now)).toEqual({ id: `1d:${Math.floor(now / 86_400_000)}`, resetsAt: at('2026-11-24T00:00:00Z') });
    // 1970-01-01 was a Thursday: 7-day windows start on Thursdays.
    expect(budgetWindow('7d', now).resetsAt).toBe(at('2026-11-26T00:00:00Z'));
    expect(new Date(budgetWindow('7d', now).resetsAt!).getUTCDay()).toBe(4);
    const thirty = budgetWindow('30d', now);
    expect((thirty.resetsAt! / 86_400_000) % 30).toBe(0);
    expect(thirty.resetsAt! - now).toBeLessThanOrEqual(30 * 86_400_000);
    expect(budgetWindow('month', now)).toEqual({ id: 'month:2026-11', resetsAt: at('2026-12-01T00:00:00Z') });
    expect(budgetWindow('month', at('2026-12-31T23:59:59.999Z'))).toEqual({ id: 'month:2026-12', resetsAt: at('2027-01-01T00:00:00Z') });
    expect(budgetWindow(undefined, now)).toEqual({ id: 'lifetime', resetsAt: undefined });
  });
});

function budgetSuite(name: string, open: () => LimitEngine) {
  describe(`dollar budgets: ${name}`, () => {
    let engine: LimitEngine;
    beforeAll(() => {
      engine = open();
    });
    afterAll(async () => {
      await engine.close?.();
    });

    const admit = (budget: BudgetAccount, now: number, enforce = true) => engine.admit(budget.owner, {}, now, { accounts: [budget], enforce });
    const spend = (budget: BudgetAccount, usd: number, now: number) => engine.settle(budget.owner, {}, { tokens: 0, cost: 0, usd, budgets: [budget] }, now);

    it('a 1d budget refuses once spent, until 00:00 UTC, then starts again from 0', async () => {
      const budget = account(1, '1d');
      const morning = at('2026-11-23T09:00:00Z');
      const first = await admit(budget, morning);
      expect(first).toMatchObject({ allowed: true, budgets: [{ spentUsd: 0, resetsAt: at('2026-11-24T00:00:00Z') }] });
      await spend(budget, 0.6, morning);
      expect((await admit(budget, morning)).allowed).toBe(true);
      // Checked before, counted after: the request in flight may overshoot, and is counted in full.
      await spend(budget, 0.6, morning);
      const evening = at('2026-11-23T23:59:00Z');
      const refused = refusal(await admit(budget, evening));
      expect(refused).toMatchObject({ reason: 'budget', retryAfterMs: 60_000, budgets: [{ spentUsd: 1.2 }] });

      const nextDay = at('2026-11-24T00:00:00Z');
      expect(await admit(budget, nextDay)).toMatchObject({ allowed: true, budgets: [{ spentUsd: 0, resetsAt: at('2026-11-25T00:00:00Z') }] });
      expect(await engine.budgetSpent!(budget, nextDay)).toBe(0);
    });

    it('a month budget spans the calendar month and resets on the 1st, 00:00 UTC', async () => {
      const budget = account(10, 'month');
      await spend(budget, 4, at('2026-11-01T00:00:00Z'));
      await spend(budget, 6, at('2026-11-30T12:00:00Z'));
      const refused = refusal(await admit(budget, at('2026-11-30T23:00:00Z')));
      expect(refused.reason).toBe('budget');
      expect(refused.retryAfterMs).toBe(3_600_000);
      expect(refused.budgets).toEqual([{ account: budget, spentUsd: 10, resetsAt: at('2026-12-01T00:00:00Z') }]);
      expect(await admit(budget, at('2026-12-01T00:00:00Z'))).toMatchObject({ allowed: true, budgets: [{ spentUsd: 0 }] });
    });

    it('a lifetime budget never resets, and its refusal has no time to wait for', async () => {
      const budget = account(0.5);
      await spend(budget, 0.5, at('2026-01-01T00:00:00Z'));
      const refused = refusal(await admit(budget, at('2031-06-01T00:00:00Z')));
      expect(refused).toMatchObject({ reason: 'budget', retryAfterMs: 0, budgets: [{ spentUsd: 0.5, resetsAt: undefined }] });
    });

    it('adds spend exactly, to the billionth of a dollar (no 0.1 + 0.2 drift)', async () => {
      const budget = account(0.3);
      const now = at('2026-11-23T10:00:00Z');
      await spend(budget, 0.1, now);
      await spend(budget, 0.2, now);
      expect(await engine.budgetSpent!(budget, now)).toBe(0.3);
      expect(refusal(await admit(budget, now)).reason).toBe('budget');
      // A cached-token price ($0.10 per million) still counts for one token.
      const tiny = account(1);
      await spend(tiny, 0.0000001, now);
      expect(await engine.budgetSpent!(tiny, now)).toBe(0.0000001);
    });

    it('a budget of $0 refuses every priced request from the start', async () => {
      expect(refusal(await admit(account(0, '1d'), at('2026-11-23T10:00:00Z'))).reason).toBe('budget');
    });

    it('reports a spent budget without refusing when not enforced (a free model), and counts nothing for it', async () => {
      const budget = account(1, '1d');
      const now = at('2026-11-23T10:00:00Z');
      await spend(budget, 1, now);
      expect(await admit(budget, now, false)).toMatchObject({ allowed: true, budgets: [{ spentUsd: 1 }] });
      await engine.settle(budget.owner, {}, { tokens: 0, cost: 0, usd: 0, budgets: [budget] }, now);
      expect(await engine.budgetSpent!(budget, now)).toBe(1);
    });

    it('counts one spend into the key’s and the group’s budgets, and refuses on whichever ran out', async () => {
      const key = account(5, '1d');
      const group = account(1, '1d', 'group');
      const now = at('2026-11-23T10:00:00Z');
      await engine.settle(key.owner, {}, { tokens: 0, cost: 0, usd: 1, budgets: [key, group] }, now);
      const refused = refusal(await engine.admit(key.owner, {}, now, { accounts: [key, group], enforce: true }));
      expect(refused.reason).toBe('budget');
      expect(refused.budgets!.map((state) => [state.account.scope, state.spentUsd])).toEqual([
        ['key', 1],
        ['group', 1],
      ]);
    });

    it('refuses on the budget before anything else is counted: no request, no concurrency slot', async () => {
      const budget = account(1, '1d');
      const now = at('2026-11-23T10:00:00Z');
      await spend(budget, 1, now);
      const limits = { requestsPerMinute: 1, concurrentRequests: 1 };
      refusal(await engine.admit(budget.owner, limits, now, { accounts: [budget], enforce: true }));
      const free = await engine.admit(budget.owner, limits, now, { accounts: [budget], enforce: false });
      expect(free).toMatchObject({ allowed: true, requests: { limit: 1, remaining: 0 } });
      if (free.allowed) await engine.settle(budget.owner, limits, { slot: free.slot, tokens: 0, cost: 0 }, now);
    });
  });
}

budgetSuite('memory', () => new MemoryLimitEngine());

const targets = await redisTargets();

describe.each(targets)('Redis ($name)', (target) => {
  afterAll(() => target.close());
  budgetSuite(`Redis ${target.name}`, () => new RedisLimitEngine({ ...target.connection, keyPrefix: `infergate-test-${randomBytes(6).toString('hex')}:` }));
  clockSuite(target);
});

function clockSuite(target: RedisTarget) {
  describe('Redis budget counters do not depend on Redis’s clock', () => {
    const year = 365 * 86_400_000;
    let engine: RedisLimitEngine;
    let client: RedisClient;
    const prefix = `infergate-test-${randomBytes(6).toString('hex')}:`;
    beforeAll(() => {
      engine = new RedisLimitEngine({ ...target.connection, keyPrefix: prefix });
      client = target.client();
    });
    afterAll(async () => {
      await engine.close();
    });

    // Before the fix a window that had ended by Redis's clock got an expiry in the past (PEXPIREAT),
    // and Redis deleted the counter in the same transaction that added to it.
    it.each([
      ['ten years ago', -10 * year],
      ['a year ago', -year],
      ['a year ahead', year],
      ['ten years ahead', 10 * year],
    ])('keeps a 1d window’s spend settled with a clock %s, for its window plus the grace hour', async (_, shift) => {
      const budget = account(1, '1d');
      const now = Date.now() + shift;
      await engine.settle(budget.owner, {}, { tokens: 0, cost: 0, usd: 0.25, budgets: [budget] }, now);
      expect(await engine.budgetSpent(budget, now)).toBe(0.25);
      const window = budgetWindow('1d', now);
      const ttl = await client.pttl(`${prefix}{key:${budget.owner}}:budget:${window.id}`);
      expect(ttl).toBeGreaterThan(3_600_000);
      expect(ttl).toBeLessThanOrEqual(window.resetsAt! - now + 3_600_000);
    });
  });
}
