import { describe, expect, it } from 'vitest';
import { MemoryCacheStore } from '../../src/cache/memory-cache-store.js';

describe('MemoryCacheStore', () => {
  it('evicts the least recently used entry past maxEntries; a read makes an entry recent', () => {
    const store = new MemoryCacheStore({ maxEntries: 2 });
    store.set('a', 'A', 1000);
    store.set('b', 'B', 1000);
    expect(store.get('a')).toBe('A');
    store.set('c', 'C', 1000);
    expect(store.get('b')).toBeUndefined();
    expect(store.get('a')).toBe('A');
    expect(store.get('c')).toBe('C');
    expect(store.size).toBe(2);
  });

  it('evicts the least recently used entries past maxChars, and never keeps one larger than that', () => {
    const store = new MemoryCacheStore({ maxChars: 10 });
    store.set('a', 'xxxx', 1000);
    store.set('b', 'yyyy', 1000);
    store.set('c', 'zzzz', 1000);
    expect([...store.keys()]).toEqual(['b', 'c']);
    store.set('huge', 'x'.repeat(11), 1000);
    expect(store.get('huge')).toBeUndefined();
    expect([...store.keys()]).toEqual(['b', 'c']);
  });

  it('expires each entry after its ttl, on the injected clock', () => {
    let now = 0;
    const store = new MemoryCacheStore({ now: () => now });
    store.set('short', 's', 100);
    store.set('long', 'l', 1000);
    now = 99;
    expect(store.get('short')).toBe('s');
    now = 100;
    expect(store.get('short')).toBeUndefined();
    expect(store.get('long')).toBe('l');
    expect([...store.keys()]).toEqual(['long']);
  });

  it('replaces an entry under the same key, counting its size once', () => {
    const store = new MemoryCacheStore({ maxChars: 8 });
    store.set('a', 'xxxx', 1000);
    store.set('a', 'yyyy', 1000);
    store.set('b', 'zzzz', 1000);
    expect(store.get('a')).toBe('yyyy');
    expect(store.get('b')).toBe('zzzz');
  });

  it('refuses bad limits', () => {
    expect(() => new MemoryCacheStore({ maxEntries: 0 })).toThrow(/maxEntries must be a positive integer/);
    expect(() => new MemoryCacheStore({ maxChars: 1.5 })).toThrow(/maxChars must be a positive integer/);
  });
});
