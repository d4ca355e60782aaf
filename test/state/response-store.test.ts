import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { MemoryResponseStore } from '../../src/state/memory-response-store.js';
import { RedisResponseStore } from '../../src/state/redis-response-store.js';
import type { ResponseStore, StoredResponse } from '../../src/state/response-store.js';
import { freePort } from '../media/helpers.js';
import { redisTargets } from '../redis/targets.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const uniqueId = () => `resp_${randomBytes(8).toString('hex')}`;

function stored(id: string, fields: Partial<StoredResponse> = {}): StoredResponse {
  return {
    id,
    keyId: 'key_a',
    model: 'gpt-chat',
    items: [
      { type: 'message', role: 'user', content: 'Weather in Zürich? 🌦' },
      { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Zürich"}', status: 'completed' },
      { type: 'function_call_output', call_id: 'call_1', output: '12°C' },
      { type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'It is 12°C.', annotations: [] }] },
    ],
    createdAt: 1_700_000_000_000,
    ...fields,
  };
}

/** The same suite for every store; `open({ shortTtl })` makes a store whose responses live 1 s. */
function storeSuite(name: string, open: (options?: { shortTtl?: boolean }) => ResponseStore) {
  describe(`ResponseStore: ${name}`, () => {
    let store: ResponseStore;
    beforeAll(() => {
      store = open();
    });
    afterAll(async () => {
      await store.close?.();
    });

    it('returns what was put, as a copy; unknown ids are undefined', async () => {
      const id = uniqueId();
      const response = stored(id);
      await store.put(response);
      (response.items as unknown[]).push('changed after put');
      const read = await store.get(id);
      expect(read).toEqual(stored(id));
      (read!.items as unknown[]).length = 0;
      expect(await store.get(id)).toEqual(stored(id));
      expect(await store.get(uniqueId())).toBeUndefined();
      expect(await store.get('')).toBeUndefined();
    });

    it('keeps every key’s responses: scoping to the key is the conversation’s job, not the store’s', async () => {
      const [a, b] = [uniqueId(), uniqueId()];
      await store.put(stored(a, { keyId: 'key_a' }));
      await store.put(stored(b, { keyId: 'key_b' }));
      expect((await store.get(a))?.keyId).toBe('key_a');
      expect((await store.get(b))?.keyId).toBe('key_b');
    });

    it('replaces a response put twice', async () => {
      const id = uniqueId();
      await store.put(stored(id));
      await store.put(stored(id, { items: [{ type: 'message', role: 'user', content: 'again' }] }));
      expect((await store.get(id))?.items).toEqual([{ type: 'message', role: 'user', content: 'again' }]);
    });

    it('finds a response read right after its put was issued (not awaited)', async () => {
      const id = uniqueId();
      const put = store.put(stored(id));
      expect(await store.get(id)).toEqual(stored(id));
      await put;
    });

    it('finds stored items by id for the key that stored them only, in the order asked, as copies', async () => {
      const [a, b] = [uniqueId(), uniqueId()];
      const msg = `msg_${a}`;
      const fc = `fc_${a}`;
      await store.put(
        stored(a, {
          items: [
            ...stored(a).items,
            { type: 'message', id: msg, role: 'assistant', content: [{ type: 'output_text', text: 'Hi 👋' }] },
            { type: 'function_call', id: fc, call_id: 'c', name: 'f', arguments: '{}' },
          ],
        }),
      );
      await store.put(stored(b, { keyId: 'key_b', items: [{ type: 'message', id: `msg_${b}`, role: 'assistant', content: 'theirs' }] }));
      const found = await store.getItems!('key_a', [fc, 'msg_unknown', msg, `msg_${b}`]);
      expect(found).toEqual([
        { type: 'function_call', id: fc, call_id: 'c', name: 'f', arguments: '{}' },
        undefined,
        { type: 'message', id: msg, role: 'assistant', content: [{ type: 'output_text', text: 'Hi 👋' }] },
        undefined,
      ]);
      (found[0] as Record<string, unknown>).name = 'changed';
      expect(await store.getItems!('key_a', [fc])).toEqual([expect.objectContaining({ name: 'f' })]);
      expect(await store.getItems!('key_b', [`msg_${b}`, msg])).toEqual([expect.objectContaining({ content: 'theirs' }), undefined]);
      expect(await store.getItems!('key_a', [])).toEqual([]);
    });

    it('keeps each key’s items apart even under the same item id', async () => {
      const [a, b] = [uniqueId(), uniqueId()];
      const shared = `msg_${a}`;
      await store.put(stored(a, { keyId: 'key:a', items: [{ type: 'message', id: shared, role: 'assistant', content: 'from a' }] }));
      await store.put(stored(b, { keyId: 'key', items: [{ type: 'message', id: shared, role: 'assistant', content: 'from b' }] }));
      expect(await store.getItems!('key:a', [shared])).toEqual([expect.objectContaining({ content: 'from a' })]);
      expect(await store.getItems!('key', [shared])).toEqual([expect.objectContaining({ content: 'from b' })]);
      expect(await store.getItems!('key:a:', [shared])).toEqual([undefined]);
    });

    it('finds the items of a response read right after its put was issued (not awaited)', async () => {
      const id = uniqueId();
      const put = store.put(stored(id, { items: [{ type: 'reasoning', id: `rs_${id}`, summary: [] }] }));
      expect(await store.getItems!('key_a', [`rs_${id}`])).toEqual([{ type: 'reasoning', id: `rs_${id}`, summary: [] }]);
      await put;
    });

    it('deletes a response: gone for get, true once, false for an unknown id; the response, output count and upstream fields round-trip', async () => {
      const id = uniqueId();
      const full = stored(id, { response: { object: 'response', instructions: null }, outputCount: 1, upstream: { provider: 'oai', deployment: 'oai/gpt-5' } });
      await store.put(full);
      expect(await store.get(id)).toEqual(full);
      expect(await store.delete!(id)).toBe(true);
      expect(await store.get(id)).toBeUndefined();
      expect(await store.delete!(id)).toBe(false);
      expect(await store.delete!(uniqueId())).toBe(false);
    });

    it('forgets responses after their time to live', async () => {
      const short = open({ shortTtl: true });
      try {
        const id = uniqueId();
        await short.put(stored(id));
        expect(await short.get(id)).toBeDefined();
        expect(await short.getItems!('key_a', ['msg_1'])).toEqual([expect.objectContaining({ id: 'msg_1' })]);
        await sleep(1200);
        expect(await short.get(id)).toBeUndefined();
        expect(await short.getItems!('key_a', ['fc_1', 'msg_1'])).toEqual([undefined, undefined]);
      } finally {
        await short.close?.();
      }
    });
  });
}

storeSuite('memory', (options) => new MemoryResponseStore(options?.shortTtl ? { ttlMs: 1000 } : {}));

describe('MemoryResponseStore bounds', () => {
  it('drops the oldest responses past maxResponses; a put again counts as new', async () => {
    const store = new MemoryResponseStore({ maxResponses: 3 });
    for (const id of ['r1', 'r2', 'r3']) await store.put(stored(id));
    await store.put(stored('r1'));
    await store.put(stored('r4'));
    expect(await store.get('r2')).toBeUndefined();
    for (const id of ['r1', 'r3', 'r4']) expect(await store.get(id)).toBeDefined();
  });

  it('drops the oldest responses past maxBytes, and refuses one larger than the bound', async () => {
    const size = Buffer.byteLength(JSON.stringify(stored('r1')));
    const store = new MemoryResponseStore({ maxBytes: size * 2 + 10 });
    for (const id of ['r1', 'r2', 'r3']) await store.put(stored(id));
    expect(await store.get('r1')).toBeUndefined();
    expect(await store.get('r2')).toBeDefined();
    expect(await store.get('r3')).toBeDefined();
    await expect(store.put(stored('big', { items: ['x'.repeat(size * 3)] }))).rejects.toThrow(/larger than maxBytes/);
    expect(await store.get('r3')).toBeDefined();
  });

  it('expires by the clock, dropping expired responses first', async () => {
    vi.useFakeTimers({ now: 1_000_000, toFake: ['Date'] });
    try {
      const store = new MemoryResponseStore({ ttlMs: 60_000, maxResponses: 2 });
      await store.put(stored('old'));
      vi.setSystemTime(1_000_000 + 59_999);
      expect(await store.get('old')).toBeDefined();
      await store.put(stored('new'));
      vi.setSystemTime(1_000_000 + 60_000);
      expect(await store.get('old')).toBeUndefined();
      expect(await store.get('new')).toBeDefined();
    } finally {
      vi.useRealTimers();
    }
  });

  it('drops an item with the last response holding it; one a newer response holds stays', async () => {
    const store = new MemoryResponseStore({ maxResponses: 2 });
    const item = (id: string) => ({ type: 'message', id, role: 'assistant', content: id });
    await store.put(stored('r1', { items: [item('msg_a'), item('msg_b')] }));
    await store.put(stored('r2', { items: [item('msg_a'), item('msg_c')] }));
    await store.put(stored('r3', { items: [item('msg_d')] }));
    // r1 is gone: msg_b with it, msg_a still in r2.
    expect(await store.getItems('key_a', ['msg_a', 'msg_b', 'msg_c', 'msg_d'])).toEqual([item('msg_a'), undefined, item('msg_c'), item('msg_d')]);
    // A response put again no longer holding an item drops it.
    await store.put(stored('r3', { items: [] }));
    expect(await store.getItems('key_a', ['msg_d'])).toEqual([undefined]);
  });

  it('has documented defaults and rejects bad options', async () => {
    expect(() => new MemoryResponseStore()).not.toThrow();
    expect(() => new MemoryResponseStore({ maxResponses: 0 })).toThrow(/maxResponses/);
    expect(() => new MemoryResponseStore({ maxBytes: 1.5 })).toThrow(/maxBytes/);
    expect(() => new MemoryResponseStore({ ttlMs: -1 })).toThrow(/ttlMs/);
  });
});

const targets = await redisTargets();
const prefix = `infergate-test-${randomBytes(4).toString('hex')}:`;

describe.each(targets)('Redis ($name)', (target) => {
  const { connection } = target;
  afterAll(() => target.close(prefix));

  storeSuite(
    `redis ${target.name}`,
    (options) => new RedisResponseStore({ ...connection, keyPrefix: prefix, ...(options?.shortTtl ? { ttlSeconds: 1 } : {}) }),
  );

  it('keeps one string key per response, expiring after ttlSeconds (default 30 days)', async () => {
    const store = new RedisResponseStore({ ...connection, keyPrefix: prefix });
    const shorter = new RedisResponseStore({ ...connection, keyPrefix: prefix, ttlSeconds: 600 });
    try {
      const [a, b] = [uniqueId(), uniqueId()];
      await store.put(stored(a));
      await shorter.put(stored(b));
      const raw = target.client();
      expect(await raw.type(`${prefix}response:${a}`)).toBe('string');
      expect(JSON.parse((await raw.get(`${prefix}response:${a}`))!)).toEqual(stored(a));
      expect(await raw.ttl(`${prefix}response:${a}`)).toBeGreaterThan(30 * 24 * 3600 - 60);
      expect(await raw.ttl(`${prefix}response:${b}`)).toBeGreaterThan(590);
      expect(await raw.ttl(`${prefix}response:${b}`)).toBeLessThanOrEqual(600);
    } finally {
      await store.close();
      await shorter.close();
    }
  });

  it('keeps one string key per item under its key id, with the response’s expiry', async () => {
    const store = new RedisResponseStore({ ...connection, keyPrefix: prefix, ttlSeconds: 600 });
    try {
      const id = uniqueId();
      await store.put(stored(id, { keyId: 'team/a:b' }));
      const raw = target.client();
      const key = `${prefix}item:team%2Fa%3Ab:msg_1`;
      expect(await raw.type(key)).toBe('string');
      expect(JSON.parse((await raw.get(key))!)).toEqual(stored(id).items[3]);
      expect(await raw.ttl(key)).toBeGreaterThan(590);
      expect(await raw.ttl(`${prefix}item:team%2Fa%3Ab:fc_1`)).toBeGreaterThan(590);
      // Items without an id get no key.
      expect(await target.keys(`${prefix}item:team%2Fa%3Ab:*`)).toHaveLength(2);
    } finally {
      await store.close();
    }
  });

  it('reads and writes a response and its items wherever their keys’ slots are (no command spans two keys)', async () => {
    const store = new RedisResponseStore({ ...connection, keyPrefix: prefix });
    try {
      const id = uniqueId();
      // Enough items that, on a cluster, they land on every primary.
      const items = Array.from({ length: 30 }, (_, index) => ({ type: 'message', id: `msg_${id}_${index}`, role: 'assistant', content: String(index) }));
      await store.put(stored(id, { items }));
      expect((await store.get(id))?.items).toEqual(items);
      expect(await store.getItems('key_a', items.map((item) => item.id).reverse())).toEqual([...items].reverse());
    } finally {
      await store.close();
    }
  });

  it('shares responses between instances (two gateways, or a restart)', async () => {
    const [a, b] = [0, 1].map(() => new RedisResponseStore({ ...connection, keyPrefix: prefix }));
    try {
      const id = uniqueId();
      await a!.put(stored(id));
      expect(await b!.get(id)).toEqual(stored(id));
    } finally {
      await a!.close();
      await b!.close();
    }
  });

  it('uses a given client and leaves it open', async () => {
    const connection = target.client();
    const store = new RedisResponseStore({ client: connection, keyPrefix: prefix });
    const id = uniqueId();
    await store.put(stored(id));
    expect(await store.get(id)).toEqual(stored(id));
    await store.close();
    expect(await connection.ping()).toBe('PONG');
  });
});

describe('RedisResponseStore without Redis', () => {
  // How the connection fails fast is tested in test/redis/fail-fast-redis.test.ts; here, that every call goes through it.
  it('rejects every call quickly instead of hanging', async () => {
    const port = await freePort();
    const store = new RedisResponseStore({ url: `redis://127.0.0.1:${port}`, keyPrefix: prefix });
    try {
      for (const call of [() => store.get(uniqueId()), () => store.put(stored(uniqueId())), () => store.getItems('key_a', ['msg_1'])]) {
        const started = Date.now();
        await expect(call()).rejects.toThrow();
        expect(Date.now() - started).toBeLessThan(2500);
      }
    } finally {
      await store.close();
    }
  });

  it('needs a client or a url, and sane numbers', () => {
    expect(() => new RedisResponseStore({})).toThrow(/client.*url/);
    expect(() => new RedisResponseStore({ url: 'redis://127.0.0.1:1', ttlSeconds: 0, timeoutMs: 10 })).toThrow(/ttlSeconds/);
    expect(() => new RedisResponseStore({ url: 'redis://127.0.0.1:1', timeoutMs: 0 })).toThrow(/timeoutMs/);
  });
});
