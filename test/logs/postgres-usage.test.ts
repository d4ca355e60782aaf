import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGateway, type Gateway } from '../../src/gateway.js';
import { MemoryRequestLog } from '../../src/logs/memory-request-log.js';
import { PostgresRequestLog } from '../../src/logs/postgres-request-log.js';
import { createLocalProvider, localModels } from '../../src/providers/local/local-provider.js';
import type { UsageStore } from '../../src/state/usage-store.js';
import { MemoryUsageStore } from '../../src/state/usage-store.js';
import { testDatabase, type TestDatabase } from '../helpers/postgres.js';

const PRICE = { input: 1.5, output: 2.25 };
const keys = [
  { key: 'sk-alice', id: 'alice', group: 'team-a' },
  { key: 'sk-bob', id: 'bob' },
];

let db: TestDatabase;
let log: PostgresRequestLog;

beforeAll(async () => {
  db = await testDatabase();
  log = new PostgresRequestLog({ url: db.url, schema: db.schema, flushMs: 10 });
});

afterAll(async () => {
  await log.close();
  await db.close();
});

function gatewayWith(usageStore: UsageStore, requestLog: PostgresRequestLog | MemoryRequestLog): Gateway {
  return createGateway({
    keys,
    providers: { local: createLocalProvider({ chunkDelayMs: 0 }) },
    models: localModels('local').map((model) => ({ ...model, price: PRICE })),
    logger: false,
    usageStore,
    requestLog,
  });
}

/** The same requests, to a gateway: chats and a stream of two keys. */
async function traffic(gateway: Gateway): Promise<void> {
  const requests: [string, Record<string, unknown>][] = [
    ['sk-alice', { model: 'local-chat', messages: [{ role: 'user', content: 'hello' }] }],
    ['sk-alice', { model: 'local-chat', stream: true, messages: [{ role: 'user', content: 'a longer question, with more words in it' }] }],
    ['sk-bob', { model: 'local-chat', messages: [{ role: 'user', content: 'hi' }], max_tokens: 3 }],
    ['sk-alice', { model: 'local-chat', messages: [{ role: 'user', content: 'third' }] }],
  ];
  for (const [key, body] of requests) {
    const response = await gateway.fetch('http://gateway/v1/chat/completions', {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    await response.text();
  }
}

async function usageOf(gateway: Gateway, key: string): Promise<unknown> {
  const response = await gateway.fetch('http://gateway/v1/usage', { headers: { authorization: `Bearer ${key}` } });
  expect(response.status).toBe(200);
  return response.json();
}

describe('GET /v1/usage from the Postgres rollups', () => {
  it('answers the same numbers as the memory usage store for the same requests', async () => {
    const memoryStore = new MemoryUsageStore();
    const memoryLog = new MemoryRequestLog();
    const inMemory = gatewayWith(memoryStore, memoryLog);
    const onPostgres = gatewayWith(log.usageStore(), log);
    await traffic(inMemory);
    await traffic(onPostgres);
    await expect.poll(() => memoryLog.sinkStats().written).toBe(4);
    await expect.poll(() => log.sinkStats().written + log.sinkStats().queued).toBe(4);
    await log.flush();
    expect(log.sinkStats().written).toBe(4);
    for (const key of ['sk-alice', 'sk-bob']) {
      const expected = (await usageOf(inMemory, key)) as { data: { cost_usd: number; output_tokens: number }[] };
      expect(expected.data[0]!.cost_usd).toBeGreaterThan(0);
      expect(expected.data[0]!.output_tokens).toBeGreaterThan(0);
      expect(await usageOf(onPostgres, key)).toEqual(expected);
    }
    await inMemory.dispose();
    await onPostgres.dispose();
  });
});
