import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisCacheStore } from '../../src/redis.js';
import { createGateway, type Gateway } from '../../src/gateway.js';
import { createOpenAIProvider } from '../../src/providers/openai/openai-provider.js';
import { startFakeOpenAI } from '../fakes/fake-openai.js';
import type { FakeUpstream } from '../fakes/fake-server.js';
import { freePort } from '../helpers/serve.js';
import { redisTargets } from '../redis/targets.js';

/**
 * The response cache in Redis: two gateways (two instances of one deployment) share answers
 * through it, entries expire by Redis's own TTL (`SET … PX`), and a Redis that is down makes
 * misses, never failures.
 */
let upstream: FakeUpstream;
const targets = await redisTargets();

beforeAll(async () => {
  upstream = await startFakeOpenAI({ endpoints: ['chat'] });
});

afterAll(async () => {
  await upstream.close();
});

function gatewayWith(store: RedisCacheStore, maxEntryBytes?: number): Gateway {
  return createGateway({
    keys: [{ key: 'sk-a', id: 'team/a' }],
    providers: { oai: createOpenAIProvider({ baseURL: upstream.url + '/v1', apiKey: 'up-key', responses: false }) },
    models: [{ id: 'chat', provider: 'oai', upstreamModel: 'gpt-4.1', cache: true }],
    responseCache: { ttlSeconds: 120, store, ...(maxEntryBytes ? { maxEntryBytes } : {}) },
    logger: false,
  });
}

async function ask(gateway: Gateway, prompt: string, stream = false): Promise<{ cache: string | null; text: string; status: number }> {
  const response = await gateway.fetch('http://gateway.test/v1/chat/completions', {
    method: 'POST',
    headers: { authorization: 'Bearer sk-a', 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: prompt }], temperature: 0, stream }),
  });
  return { cache: response.headers.get('x-infergate-cache'), text: await response.text(), status: response.status };
}

describe.each(targets)('RedisCacheStore ($name)', (target) => {
  const { connection } = target;
  const prefix = `infergate-test-${randomUUID()}:`;
  afterAll(() => target.close(prefix));

  /** The write happens after the answer: waits until Redis holds `count` entries under the prefix. */
  async function entries(count: number): Promise<string[]> {
    for (let i = 0; i < 600; i++) {
      const keys = await target.keys(`${prefix}cache:*`);
      if (keys.length >= count) return keys;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    return target.keys(`${prefix}cache:*`);
  }

  it('shares answers between two gateways, in keys that expire with the TTL', async () => {
    const storeA = new RedisCacheStore({ ...connection, keyPrefix: prefix });
    const storeB = new RedisCacheStore({ ...connection, keyPrefix: prefix });
    try {
      upstream.reset();
      upstream.reply({ text: ['Shared', ' answer.'], usage: { input: 11, output: 3 } });
      const first = await ask(gatewayWith(storeA), 'shared?', true);
      expect(first.cache).toBe('miss');
      const [key] = await entries(1);
      expect(key).toMatch(new RegExp(`^${prefix}cache:team%2Fa:[0-9a-f]{64}$`));
      const ttl = await target.client().pttl(key!);
      expect(ttl).toBeGreaterThan(100_000);
      expect(ttl).toBeLessThanOrEqual(120_000);
      const second = await ask(gatewayWith(storeB), 'shared?');
      expect(second.cache).toBe('hit');
      expect(JSON.parse(second.text)).toMatchObject({
        choices: [{ message: { content: 'Shared answer.' } }],
        usage: { prompt_tokens: 11, completion_tokens: 3 },
      });
      expect(upstream.accepted()).toHaveLength(1);
    } finally {
      await Promise.all([storeA.close(), storeB.close()]);
    }
  });

  it('never writes an answer over maxEntryBytes', async () => {
    const store = new RedisCacheStore({ ...connection, keyPrefix: prefix });
    try {
      const before = (await target.keys(`${prefix}cache:*`)).length;
      upstream.reply({ text: ['y'.repeat(4000)] });
      const gateway = gatewayWith(store, 1024);
      expect((await ask(gateway, 'long?')).cache).toBe('miss');
      upstream.reply({ text: ['y'.repeat(4000)] });
      expect((await ask(gateway, 'long?')).cache).toBe('miss');
      expect(await target.keys(`${prefix}cache:*`)).toHaveLength(before);
    } finally {
      await store.close();
    }
  });

  it('answers from the upstream when Redis is down: every request a miss, none failed', async () => {
    const store = new RedisCacheStore({ ...target.unreachable(await freePort()), timeoutMs: 200 });
    try {
      const gateway = gatewayWith(store);
      upstream.reset();
      for (let i = 0; i < 2; i++) {
        const answer = await ask(gateway, 'redis down?');
        expect(answer).toMatchObject({ status: 200, cache: 'miss' });
      }
      expect(upstream.accepted()).toHaveLength(2);
    } finally {
      await store.close();
    }
  });
});
