import { describe, expect, it } from 'vitest';
import { type CacheKeyInput, cacheKeyOf, canonicalJson } from '../../src/cache/cache-key.js';
import { WorkBudget } from '../../src/work-budget.js';

const base: Omit<CacheKeyInput, 'body'> = { keyId: 'team/a', protocol: 'chat', model: 'gpt', headers: {} };

describe('cache key', () => {
  it('canonical JSON sorts keys at every depth and leaves out undefined', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, { f: 1, e: undefined }], c: null } }, new WorkBudget())).toBe('{"a":{"c":null,"d":[2,{"f":1}]},"b":1}');
  });

  it('is the key id (URL-encoded, never the key) and a sha256 of the request', () => {
    const key = cacheKeyOf({ ...base, body: { messages: [] } });
    expect(key).toMatch(/^team%2Fa:[0-9a-f]{64}$/);
  });

  it('ignores delivery and caller fields, not the ones that change the answer', () => {
    const key = (body: Record<string, unknown>, changes: Partial<typeof base> = {}) => cacheKeyOf({ ...base, ...changes, body });
    const plain = key({ messages: [{ role: 'user', content: 'hi' }], temperature: 0 });
    expect(
      key({
        temperature: 0,
        messages: [{ content: 'hi', role: 'user' }],
        stream: true,
        stream_options: { include_usage: true },
        user: 'u',
        metadata: { a: 1 },
        model: 'other',
        store: false,
      }),
    ).toBe(plain);
    expect(key({ messages: [{ role: 'user', content: 'hi' }], temperature: 0, max_tokens: 5 })).not.toBe(plain);
    expect(key({ messages: [{ role: 'user', content: 'hi' }], temperature: 0 }, { model: 'gpt-2' })).not.toBe(plain);
    expect(key({ messages: [{ role: 'user', content: 'hi' }], temperature: 0 }, { protocol: 'responses' })).not.toBe(plain);
    expect(key({ messages: [{ role: 'user', content: 'hi' }], temperature: 0 }, { keyId: 'team/b' })).not.toBe(plain);
    expect(key({ messages: [{ role: 'user', content: 'hi' }], temperature: 0 }, { headers: { 'anthropic-beta': 'x' } })).not.toBe(plain);
  });

  it('has no key (the request is not cached) for a body of more than 100,000 values, rather than sorting them all', () => {
    expect(cacheKeyOf({ ...base, body: { messages: [], input: Array.from({ length: 99_990 }, () => 0) } })).toMatch(/^team%2Fa:/);
    expect(cacheKeyOf({ ...base, body: { messages: [], input: Array.from({ length: 100_001 }, () => 0) } })).toBeUndefined();
  });
});
