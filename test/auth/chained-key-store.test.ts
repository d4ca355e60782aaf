import { describe, expect, it } from 'vitest';
import { MemoryKeyStore } from '../../src/admin/keys/memory-key-store.js';
import { ChainedKeyStore } from '../../src/auth/chained-key-store.js';
import { StaticKeyStore, type KeyRecord, type KeyStore } from '../../src/auth/key-store.js';
import type { UsageEvent } from '../../src/policy/events.js';

const context = { request: new Request('http://gateway.test/v1/models'), serverContext: undefined };
const event = { cost: 10 } as UsageEvent;

describe('ChainedKeyStore', () => {
  it('asks the stores in order: a static key first, then a managed one; unknown to all is undefined', async () => {
    const managed = new MemoryKeyStore();
    const { key, secret } = await managed.create({ name: 'run-time' }, { name: 'test' });
    const chain = new ChainedKeyStore([new StaticKeyStore([{ key: 'sk-static', id: 'static-id' }]), managed]);
    expect((await chain.lookup('sk-static', context))?.id).toBe('static-id');
    expect((await chain.lookup(secret, context))?.id).toBe(key.id);
    expect(await chain.lookup('sk-nobody', context)).toBeUndefined();
  });

  it('charges the store whose record it was', async () => {
    const charged: string[] = [];
    const store = (name: string, id: string): KeyStore => ({
      lookup: (key) => (key === id ? { id, models: '*' } : undefined),
      charge: (record: KeyRecord) => void charged.push(`${name}:${record.id}`),
    });
    const chain = new ChainedKeyStore([store('first', 'a'), store('second', 'b')]);
    await chain.charge((await chain.lookup('b', context))!, event);
    await chain.charge((await chain.lookup('a', context))!, event);
    expect(charged).toEqual(['second:b', 'first:a']);
  });

  it('fails closed: a store that throws refuses the key, the next store is not asked', async () => {
    let asked = false;
    const chain = new ChainedKeyStore([
      { lookup: () => Promise.reject(new Error('database down')) },
      {
        lookup: () => {
          asked = true;
          return { id: 'x', models: '*' };
        },
      },
    ]);
    await expect(chain.lookup('any', context)).rejects.toThrow('database down');
    expect(asked).toBe(false);
  });
});
