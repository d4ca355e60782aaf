import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bodyOf, post, startCacheHarness, type CacheHarness } from './cache-harness.js';

/** The cache's bounds through the gateway: entries (LRU) and the size of one answer. */
let harness: CacheHarness;
beforeAll(async () => {
  harness = await startCacheHarness({ maxEntries: 2, responseCache: { maxEntryBytes: 2048 } });
});
afterAll(() => harness.close());

async function cacheHeader(prompt: string): Promise<string | null> {
  const response = await post(harness, 'chat', bodyOf('chat', 'chat', prompt));
  await response.text();
  return response.headers.get('x-infergate-cache');
}

describe('response cache bounds', () => {
  it('drops the least recently used answer past maxEntries', async () => {
    expect(await cacheHeader('one')).toBe('miss');
    expect(await cacheHeader('two')).toBe('miss');
    expect(await cacheHeader('one')).toBe('hit');
    expect(await cacheHeader('three')).toBe('miss');
    // `two` was the least recently used: gone; `one` and `three` stay.
    expect(await cacheHeader('one')).toBe('hit');
    expect(await cacheHeader('three')).toBe('hit');
    expect(await cacheHeader('two')).toBe('miss');
    expect(harness.fakes.chat.accepted()).toHaveLength(4);
  });

  it('does not keep an answer larger than maxEntryBytes', async () => {
    harness.fakes.chat.reply({ text: ['x'.repeat(3000)] }, { text: ['x'.repeat(3000)] });
    expect(await cacheHeader('long answer')).toBe('miss');
    expect(await cacheHeader('long answer')).toBe('miss');
  });

  it('does not hash a body of more than 100,000 values: answered, and not cached', async () => {
    // Sorting the keys of such a body for its cache key would cost more than answering it.
    const wide = bodyOf('chat', 'chat', 'wide', { metadata_x: Array.from({ length: 100_001 }, () => 0) });
    for (let i = 0; i < 2; i++) {
      const response = await post(harness, 'chat', wide);
      expect(response.status).toBe(200);
      await response.text();
      expect(response.headers.get('x-infergate-cache')).toBe('miss');
    }
  });
});
