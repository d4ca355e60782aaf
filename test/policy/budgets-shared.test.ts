import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BudgetAccount } from '../../src/policy/budget.js';
import { RedisLimitEngine } from '../../src/policy/redis-limit-engine.js';
import { startFakeOpenAI } from '../fakes/fake-openai.js';
import type { FakeUpstream } from '../fakes/fake-server.js';
import { redisTargets } from '../redis/targets.js';
import { chat, type GatewayProcess, startGatewayProcess, stopGatewayProcesses } from './gateway-processes.js';

/**
 * Two gateway processes on one Redis keep one dollar budget: what either spends, both see, to
 * the billionth of a dollar. Each answer costs $0.02 (12 input tokens at $1,000 per million, 4
 * output at $2,000); the budgets are lifetime ones, so no test can straddle a reset.
 */
const targets = await redisTargets();

describe.each(targets)('two gateway processes on one Redis ($name)', (target) => {
  let upstream: FakeUpstream;
  let instances: GatewayProcess[] = [];
  /** Reads the same counters as the two processes. */
  let engine: RedisLimitEngine;

  beforeAll(async () => {
    upstream = await startFakeOpenAI({ endpoints: ['chat'] });
    const keyPrefix = `infergate-test-${randomUUID()}:`;
    const config = {
      upstreams: { openai: upstream.url },
      models: [{ id: 'gpt', provider: 'openai', upstreamModel: 'gpt-4.1', price: { input: 1000, output: 2000 } }],
      keys: [
        { key: 'sk-turns', id: 'turns', budget: { usd: 0.1 } },
        { key: 'sk-burst', id: 'burst', budget: { usd: 0.1 } },
      ],
      redis: target.connection,
      keyPrefix,
    };
    instances = await Promise.all([startGatewayProcess(config), startGatewayProcess(config)]);
    engine = new RedisLimitEngine({ ...target.connection, keyPrefix });
  }, 60_000);

  afterAll(async () => {
    await stopGatewayProcesses(instances);
    await engine?.close();
    await upstream?.close();
    await target.close();
  });

  const spent = (owner: string) => engine.budgetSpent({ scope: 'key', owner, usd: 0.1 } satisfies BudgetAccount, Date.now());

  it('share one budget: spend on either is seen by both, and both refuse once it is spent', async () => {
    for (let i = 0; i < 5; i++) {
      const instance = instances[i % 2]!;
      const response = await chat(instance, 'sk-turns');
      expect(response.status).toBe(200);
      // What is left is what both processes spent before this request.
      expect(response.headers.get('x-infergate-budget-remaining-usd')).toBe(String(Math.round((0.1 - 0.02 * i) * 100) / 100));
      await response.arrayBuffer();
      await expect.poll(() => spent('turns')).toBe(Math.round(0.02 * (i + 1) * 100) / 100);
    }
    for (const instance of instances) {
      const refused = await chat(instance, 'sk-turns');
      expect(refused.status).toBe(429);
      expect(refused.headers.get('x-should-retry')).toBe('false');
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('insufficient_quota');
    }
  });

  it('count a burst of concurrent requests exactly: the spend is the sum of what each admitted request cost', async () => {
    const responses = await Promise.all(Array.from({ length: 30 }, (_, i) => chat(instances[i % 2]!, 'sk-burst')));
    const statuses = responses.map((response) => response.status);
    await Promise.all(responses.map((response) => response.arrayBuffer()));
    const admitted = statuses.filter((status) => status === 200).length;
    expect(statuses.filter((status) => status !== 200 && status !== 429)).toEqual([]);
    // Checked before, counted after: requests admitted while others were in flight overshoot.
    expect(admitted).toBeGreaterThanOrEqual(5);
    await expect.poll(() => spent('burst')).toBe((admitted * 20_000_000) / 1e9);
    for (const instance of instances) expect((await chat(instance, 'sk-burst')).status).toBe(429);
  });
});
