import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI } from '../fakes/fake-openai.js';
import type { FakeUpstream } from '../fakes/fake-server.js';
import { redisTargets } from '../redis/targets.js';
import { chat, type GatewayProcess, startGatewayProcess, stopGatewayProcesses } from './gateway-processes.js';

/**
 * Two gateway processes on one Redis behave as one gateway: the same prompt_cache_key goes to
 * the same deployment from either, and a key's limits and quota hold for their sum.
 */
const targets = await redisTargets();

describe.each(targets)('two gateway processes on one Redis ($name)', (target) => {
  let east: FakeUpstream;
  let west: FakeUpstream;
  let instances: GatewayProcess[] = [];

  beforeAll(async () => {
    [east, west] = await Promise.all([startFakeOpenAI({ endpoints: ['chat'] }), startFakeOpenAI({ endpoints: ['chat'] })]);
    const config = {
      upstreams: { east: east.url, west: west.url },
      models: [
        {
          id: 'gpt',
          deployments: [
            { id: 'east', provider: 'east', upstreamModel: 'gpt-4.1' },
            { id: 'west', provider: 'west', upstreamModel: 'gpt-4.1' },
          ],
        },
      ],
      keys: [
        { key: 'sk-open', id: 'open' },
        { key: 'sk-rpm', id: 'rpm', limits: { requestsPerMinute: 10 } },
        { key: 'sk-quota', id: 'quota', limits: { quota: 40 } },
        { key: 'sk-slots', id: 'slots', limits: { concurrentRequests: 1 } },
      ],
      redis: target.connection,
      // A fresh namespace per run, so counters of an earlier run on the same Redis do not count.
      keyPrefix: `infergate-test-${randomUUID()}:`,
    };
    instances = await Promise.all([startGatewayProcess(config), startGatewayProcess(config)]);
  }, 60_000);

  afterAll(async () => {
    await stopGatewayProcesses(instances);
    await Promise.all([east?.close(), west?.close()]);
    await target.close();
  });

  it('send the same prompt_cache_key to the same deployment, 100 requests out of 100', async () => {
    east.reset();
    west.reset();
    for (let i = 0; i < 100; i++) {
      const response = await chat(instances[i % 2]!, 'sk-open', { prompt_cache_key: 'tenant-42/agent-7' });
      expect(response.status).toBe(200);
      await response.arrayBuffer();
    }
    const counts = [east.accepted().length, west.accepted().length].sort((a, b) => a - b);
    expect(counts).toEqual([0, 100]);
  });

  it('spread different prompt_cache_keys over both deployments', async () => {
    east.reset();
    west.reset();
    for (let i = 0; i < 40; i++) await (await chat(instances[i % 2]!, 'sk-open', { prompt_cache_key: `user-${i}` })).arrayBuffer();
    expect(east.accepted().length).toBeGreaterThan(5);
    expect(west.accepted().length).toBeGreaterThan(5);
  });

  it('enforce one combined requests-per-minute limit', async () => {
    const responses = await Promise.all(Array.from({ length: 30 }, (_, i) => chat(instances[i % 2]!, 'sk-rpm')));
    const statuses = responses.map((response) => response.status);
    await Promise.all(responses.map((response) => response.arrayBuffer()));
    expect(statuses.filter((status) => status === 200)).toHaveLength(10);
    expect(statuses.filter((status) => status === 429)).toHaveLength(20);
  });

  it('enforce one quota: spend on one process is seen by the other', async () => {
    // Each answer costs 16 tokens (12 in, 4 out): 16, 32, 48 ≥ 40.
    for (let i = 0; i < 3; i++) {
      const response = await chat(instances[i % 2]!, 'sk-quota');
      expect(response.status).toBe(200);
      await response.arrayBuffer();
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await expect.poll(async () => (await chat(instances[1]!, 'sk-quota')).status).toBe(429);
    const refused = await chat(instances[0]!, 'sk-quota');
    expect(refused.status).toBe(429);
    expect(refused.headers.get('x-should-retry')).toBe('false');
    expect(((await refused.json()) as any).error.code).toBe('insufficient_quota');
  });

  it('share concurrency slots: a stream open on one process takes the key’s only slot on the other', async () => {
    east.reset();
    west.reset();
    const stall = { text: ['Once', ' upon'], stallAfter: 2 };
    east.reply(stall);
    west.reply(stall);
    const streaming = await chat(instances[0]!, 'sk-slots', { stream: true });
    expect(streaming.status).toBe(200);
    const reader = streaming.body!.getReader();
    await reader.read();
    const refused = await chat(instances[1]!, 'sk-slots');
    expect(refused.status).toBe(429);
    await refused.arrayBuffer();
    await reader.cancel();
    east.reset();
    west.reset();
    await expect.poll(async () => (await chat(instances[1]!, 'sk-slots')).status, { timeout: 5000 }).toBe(200);
  });
});
