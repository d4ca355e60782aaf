import { randomUUID } from 'node:crypto';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGateway, type Gateway } from '../../src/gateway.js';
import { createLocalProvider, localModels } from '../../src/providers/local/local-provider.js';
import { RedisUsageStore } from '../../src/state/redis-usage-store.js';
import { addDays, MemoryUsageStore, type UsageStore, utcDay, utcDayCache } from '../../src/state/usage-store.js';
import { serve, type Served } from '../helpers/serve.js';
import { redisTargets } from '../redis/targets.js';

const PRICE = { input: 1, output: 2, image: 0.04 };
const keys = [
  { key: 'sk-alice', id: 'alice' },
  { key: 'sk-bob', id: 'bob' },
];

function gatewayWith(usageStore: UsageStore | false | undefined): Gateway {
  return createGateway({
    keys,
    providers: { local: createLocalProvider({ chunkDelayMs: 0, videoRenderMs: 0 }) },
    models: localModels('local').map((model) => ({ ...model, price: PRICE })),
    logger: false,
    ...(usageStore === undefined ? {} : { usageStore }),
  });
}

const chat = (gateway: Gateway, key: string, content = 'hello') =>
  gateway.fetch('http://gateway/v1/chat/completions', {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'local-chat', messages: [{ role: 'user', content }] }),
  });

async function usageOf(gateway: Gateway, key: string, query = ''): Promise<{ status: number; body: any }> {
  const response = await gateway.fetch(`http://gateway/v1/usage${query}`, { headers: { authorization: `Bearer ${key}` } });
  return { status: response.status, body: await response.json() };
}

/** Each request's usage event, read back from the `onUsage` stage the recorder also uses. */
async function chatAndWait(gateway: Gateway, key: string, store: UsageStore, keyId: string, expectedRequests: number): Promise<void> {
  const response = await chat(gateway, key);
  expect(response.status).toBe(200);
  await response.text();
  await expect.poll(async () => (await store.list(keyId, '0000-01-01', '9999-12-31')).reduce((sum, row) => sum + row.requests, 0)).toBe(expectedRequests);
}

describe('GET /v1/usage (memory)', () => {
  const store = new MemoryUsageStore();
  let gateway: Gateway;
  let served: Served;
  const today = utcDay(Date.now());
  // Older days relative to today, within the 400 days a store keeps, so the test holds on any date.
  const first = addDays(today, -60);
  const third = addDays(today, -58);

  beforeAll(async () => {
    gateway = gatewayWith(store);
    served = await serve(gateway);
    // Older days, as if recorded then.
    await store.add('alice', first, 'local-chat', { requests: 3, inputTokens: 300, outputTokens: 30, costUsd: 0.00036 });
    await store.add('alice', third, 'local-image', { requests: 1, inputTokens: 0, outputTokens: 0, costUsd: 0.08 });
    await store.add('bob', first, 'local-chat', { requests: 9, inputTokens: 900, outputTokens: 90, costUsd: 0.9 });
  });
  afterAll(async () => {
    await served.close();
    await gateway.dispose();
  });

  it("answers the caller's own usage of today, from its requests' usage events", async () => {
    // 4 requests recorded on older days, then two today.
    await chatAndWait(gateway, 'sk-alice', store, 'alice', 5);
    await chatAndWait(gateway, 'sk-alice', store, 'alice', 6);
    const { status, body } = await usageOf(gateway, 'sk-alice');
    expect(status).toBe(200);
    expect(body.object).toBe('list');
    expect(body.data).toHaveLength(1);
    const [row] = body.data;
    expect(row).toEqual({
      date: today,
      model: 'local-chat',
      requests: 2,
      input_tokens: expect.any(Number),
      output_tokens: expect.any(Number),
      cost_usd: expect.any(Number),
    });
    expect(row.input_tokens).toBeGreaterThan(0);
    expect(row.cost_usd).toBeCloseTo((row.input_tokens * PRICE.input + row.output_tokens * PRICE.output) / 1e6, 12);
  });

  it("never shows another key's spend", async () => {
    const bob = await usageOf(gateway, 'sk-bob', `?start=${addDays(first, -4)}&end=${addDays(first, 26)}`);
    expect(bob.body.data).toEqual([{ date: first, model: 'local-chat', requests: 9, input_tokens: 900, output_tokens: 90, cost_usd: 0.9 }]);
    const bobToday = await usageOf(gateway, 'sk-bob');
    expect(bobToday.body.data).toEqual([]);
  });

  it('filters by start and end, both days included, sorted by date then model', async () => {
    const all = await usageOf(gateway, 'sk-alice', `?start=${first}&end=${today}`);
    expect(all.body.data.map((row: any) => [row.date, row.model])).toEqual([
      [first, 'local-chat'],
      [third, 'local-image'],
      [today, 'local-chat'],
    ]);
    expect((await usageOf(gateway, 'sk-alice', `?start=${addDays(first, 1)}&end=${third}`)).body.data).toEqual([
      { date: third, model: 'local-image', requests: 1, input_tokens: 0, output_tokens: 0, cost_usd: 0.08 },
    ]);
    expect((await usageOf(gateway, 'sk-alice', `?start=${first}&end=${first}`)).body.data).toHaveLength(1);
    // `end` alone: the 30 days up to it (the day after `first` to 29 days later).
    expect((await usageOf(gateway, 'sk-alice', `?end=${addDays(first, 30)}`)).body.data.map((row: any) => row.date)).toEqual([third]);
  });

  it('answers 400 naming the parameter for a bad date, in the OpenAI error shape the SDK reads', async () => {
    for (const [query, param] of [
      ['?start=2026-13-01', 'start'],
      ['?start=2026-02-30', 'start'],
      ['?end=yesterday', 'end'],
      ['?start=2026-01-05T00:00:00Z', 'start'],
      ['?start=2026-02-01&end=2026-01-01', 'start'],
      ['?start=2020-01-01&end=2026-01-01', 'start'],
    ] as const) {
      const { status, body } = await usageOf(gateway, 'sk-alice', query);
      expect(status, query).toBe(400);
      expect(body.error, query).toMatchObject({ type: 'invalid_request_error', param, code: 'invalid_value' });
    }
    const client = new OpenAI({ baseURL: `${served.url}/v1`, apiKey: 'sk-alice', maxRetries: 0 });
    const failure = await client.get('/usage', { query: { start: 'soon' } }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(OpenAI.BadRequestError);
    expect((failure as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('start');
    const page = (await client.get('/usage', { query: { start: third, end: third } })) as { data: unknown[] };
    expect(page.data).toEqual([{ date: third, model: 'local-image', requests: 1, input_tokens: 0, output_tokens: 0, cost_usd: 0.08 }]);
  });

  it('asks for a key like every route', async () => {
    const response = await gateway.fetch('http://gateway/v1/usage');
    expect(response.status).toBe(401);
  });
});

describe('the usage recorder’s day', () => {
  it('is the UTC day of each time, across midnight and back', () => {
    const dayOf = utcDayCache();
    const midnight = Date.parse('2026-11-24T00:00:00Z');
    expect([midnight - 1, midnight, midnight + 86_399_999, midnight + 86_400_000, midnight - 1].map(dayOf)).toEqual([
      '2026-11-23',
      '2026-11-24',
      '2026-11-24',
      '2026-11-25',
      '2026-11-23',
    ]);
  });
});

describe('MemoryUsageStore', () => {
  it('keeps at most maxModelsPerDay models apart in a key’s day (made-up names under a wildcard model), the rest added to (other models)', async () => {
    const store = new MemoryUsageStore({ maxModelsPerDay: 2 });
    for (const model of ['a', 'b', 'made-up-1', 'a', 'made-up-2']) {
      await store.add('k', '2026-03-01', model, { requests: 1, inputTokens: 1, outputTokens: 0, costUsd: 0.5 });
    }
    await store.add('k', '2026-03-02', 'made-up-3', { requests: 1, inputTokens: 1, outputTokens: 0, costUsd: 0 });
    const rows = await store.list('k', '2026-03-01', '2026-03-02');
    expect(rows.map((row) => [row.date, row.model, row.requests, row.costUsd])).toEqual([
      ['2026-03-01', '(other models)', 2, 1],
      ['2026-03-01', 'a', 2, 1],
      ['2026-03-01', 'b', 1, 0.5],
      ['2026-03-02', 'made-up-3', 1, 0],
    ]);
  });
});

describe('usage is recorded by default, and not with usageStore: false', () => {
  it('the default store is in memory', async () => {
    const gateway = gatewayWith(undefined);
    await (await chat(gateway, 'sk-bob')).text();
    await expect.poll(async () => (await usageOf(gateway, 'sk-bob')).body.data.length).toBe(1);
    expect((await usageOf(gateway, 'sk-alice')).body.data).toEqual([]);
    await gateway.dispose();
  });

  it('false turns it off: the route answers 404', async () => {
    const gateway = gatewayWith(false);
    expect((await chat(gateway, 'sk-bob')).status).toBe(200);
    const { status, body } = await usageOf(gateway, 'sk-bob');
    expect(status).toBe(404);
    expect(body.error).toMatchObject({ code: 'not_found' });
    await gateway.dispose();
  });

  it('a usageStore without add and list is refused', () => {
    expect(() => gatewayWith({ add: async () => {} } as never)).toThrow('options.usageStore must be a UsageStore (add, list) or false');
  });
});

const targets = await redisTargets();

describe.each(targets)('RedisUsageStore ($name)', (target) => {
  const { connection } = target;
  const prefix = `infergate-test:${randomUUID()}:`;
  const stores: RedisUsageStore[] = [];
  const gateways: Gateway[] = [];

  afterAll(async () => {
    for (const gateway of gateways) await gateway.dispose();
    await Promise.all(stores.map((store) => store.close()));
    await target.close(prefix);
  });

  it('two gateways on one Redis add up to one account per key and day, kept ~400 days', async () => {
    for (let i = 0; i < 2; i++) {
      const store = new RedisUsageStore({ ...connection, keyPrefix: prefix });
      stores.push(store);
      gateways.push(gatewayWith(store));
    }
    const [east, west] = gateways as [Gateway, Gateway];
    const sent = await Promise.all([chat(east, 'sk-alice'), chat(west, 'sk-alice'), chat(west, 'sk-alice'), chat(east, 'sk-bob')]);
    await Promise.all(sent.map((response) => response.text()));
    await expect.poll(async () => (await usageOf(east, 'sk-alice')).body.data[0]?.requests).toBe(3);
    const fromEast = await usageOf(east, 'sk-alice');
    const fromWest = await usageOf(west, 'sk-alice');
    expect(fromWest.body).toEqual(fromEast.body);
    const [row] = fromEast.body.data;
    expect(row.cost_usd).toBeCloseTo((row.input_tokens * PRICE.input + row.output_tokens * PRICE.output) / 1e6, 12);
    await expect.poll(async () => (await usageOf(west, 'sk-bob')).body.data[0]?.requests).toBe(1);

    const dayKey = `${prefix}usage:alice:${utcDay(Date.now())}`;
    const ttl = await target.client().ttl(dayKey);
    expect(ttl).toBeGreaterThan(399 * 86_400);
    expect(ttl).toBeLessThanOrEqual(400 * 86_400);
  });

  it('keeps model ids with any characters apart, and small dollar amounts exactly enough', async () => {
    const store = new RedisUsageStore({ ...connection, keyPrefix: prefix });
    stores.push(store);
    await store.add('k:1', '2026-03-01', 'openai/gpt-4o|mini', { requests: 1, inputTokens: 10, outputTokens: 2, costUsd: 1e-7 });
    await store.add('k:1', '2026-03-01', 'openai/gpt-4o|mini', { requests: 1, inputTokens: 5, outputTokens: 1, costUsd: 2.5e-7 });
    await store.add('k:1', '2026-03-02', 'a', { requests: 1, inputTokens: 0, outputTokens: 0, costUsd: 0 });
    await store.add('k:2', '2026-03-01', 'a', { requests: 1, inputTokens: 1, outputTokens: 1, costUsd: 1 });
    const rows = await store.list('k:1', '2026-03-01', '2026-03-02');
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatchObject({ date: '2026-03-01', model: 'openai/gpt-4o|mini', requests: 2, inputTokens: 15, outputTokens: 3 });
    expect(rows[0]!.costUsd).toBeCloseTo(3.5e-7, 15);
    expect(rows[1]).toEqual({ date: '2026-03-02', model: 'a', requests: 1, inputTokens: 0, outputTokens: 0, costUsd: 0 });
  });

  it('lists a month of days, each its own key (on a cluster, in slots all over the shards)', async () => {
    const store = new RedisUsageStore({ ...connection, keyPrefix: prefix });
    stores.push(store);
    const days = Array.from({ length: 30 }, (_, index) => addDays('2026-04-01', index));
    for (const [index, day] of days.entries()) await store.add('k:month', day, 'a', { requests: index + 1, inputTokens: 1, outputTokens: 1, costUsd: 0 });
    const rows = await store.list('k:month', '2026-03-15', '2026-05-15');
    expect(rows.map((row) => [row.date, row.requests])).toEqual(days.map((day, index) => [day, index + 1]));
  });

  it('keeps at most maxModelsPerDay models apart in a day, the rest added to (other models)', async () => {
    const store = new RedisUsageStore({ ...connection, keyPrefix: prefix, maxModelsPerDay: 2 });
    stores.push(store);
    for (const model of ['a', 'b', 'made-up-1', 'a', 'made-up-2']) {
      await store.add('k:cap', '2026-03-01', model, { requests: 1, inputTokens: 1, outputTokens: 0, costUsd: 0 });
    }
    const rows = await store.list('k:cap', '2026-03-01', '2026-03-01');
    expect(rows.map((row) => [row.model, row.requests])).toEqual([
      ['(other models)', 2],
      ['a', 2],
      ['b', 1],
    ]);
  });

  it('a store whose Redis is down logs the failure and the request is still answered', async () => {
    const store = new RedisUsageStore({ url: 'redis://127.0.0.1:1', keyPrefix: prefix, timeoutMs: 200 });
    stores.push(store);
    const errors: string[] = [];
    const gateway = createGateway({
      keys,
      providers: { local: createLocalProvider({ chunkDelayMs: 0 }) },
      models: localModels('local'),
      logger: { info() {}, warn() {}, error: (message) => errors.push(message) },
      usageStore: store,
    });
    gateways.push(gateway);
    const response = await chat(gateway, 'sk-alice');
    expect(response.status).toBe(200);
    await response.text();
    await expect.poll(() => errors).toContain('onUsage observer failed');
  });
});
