import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { RedisMcpSessionStore } from '../../src/mcp/redis-session-store.js';
import { type McpSessionRecord, MemoryMcpSessionStore } from '../../src/mcp/session-store.js';
import { freePort } from '../helpers/serve.js';
import { redisTargets } from '../redis/targets.js';

/** The MCP session stores: what they keep, for how long, how many; a record that does not read back is no session. */

const record = (keyId = 'key_a'): McpSessionRecord => ({
  keyId,
  protocolVersion: '2025-06-18',
  createdAt: 1_700_000_000_000,
  upstream: { github: { sessionId: 'up-1', protocolVersion: '2025-06-18' }, jira: { down: 'connect ECONNREFUSED' } },
});

describe('MemoryMcpSessionStore', () => {
  it('keeps, replaces and deletes records', async () => {
    const store = new MemoryMcpSessionStore();
    await store.set('s1', record());
    expect(await store.get('s1')).toEqual(record());
    await store.set('s1', record('key_b'));
    expect((await store.get('s1'))?.keyId).toBe('key_b');
    await store.delete('s1');
    expect(await store.get('s1')).toBeUndefined();
    expect(await store.get('never')).toBeUndefined();
  });

  it('update writes only a session that still exists: a DELETE racing a renewal stays a DELETE', async () => {
    const store = new MemoryMcpSessionStore();
    await store.set('s1', record());
    await store.update('s1', { ...record(), logLevel: 'error' });
    expect((await store.get('s1'))?.logLevel).toBe('error');
    await store.delete('s1');
    await store.update('s1', { ...record(), logLevel: 'debug' });
    expect(await store.get('s1')).toBeUndefined();
    await store.update('never', record());
    expect(await store.get('never')).toBeUndefined();
  });

  it('forgets a session unused for ttlSeconds; each use starts the wait again', async () => {
    vi.useFakeTimers({ now: 1_000_000, toFake: ['Date'] });
    try {
      const store = new MemoryMcpSessionStore({ ttlSeconds: 60 });
      await store.set('used', record());
      await store.set('idle', record());
      vi.setSystemTime(1_000_000 + 59_999);
      expect(await store.get('used')).toBeDefined();
      vi.setSystemTime(1_000_000 + 60_000);
      expect(await store.get('idle')).toBeUndefined();
      // 60 s after its start, but not after its last use.
      vi.setSystemTime(1_000_000 + 119_998);
      expect(await store.get('used')).toBeDefined();
      vi.setSystemTime(1_000_000 + 119_998 + 60_000);
      expect(await store.get('used')).toBeUndefined();
    } finally {
      vi.useRealTimers();
    }
  });

  it('holds at most maxSessions, dropping the least recently used: a client opening sessions in a loop cannot grow it', async () => {
    const store = new MemoryMcpSessionStore({ maxSessions: 3 });
    for (const id of ['a', 'b', 'c']) await store.set(id, record());
    await store.get('a');
    await store.set('d', record());
    expect(await store.get('b')).toBeUndefined();
    for (const id of ['a', 'c', 'd']) expect(await store.get(id)).toBeDefined();
    for (let i = 0; i < 1000; i++) await store.set(`loop-${i}`, record());
    const kept = await Promise.all(['loop-997', 'loop-998', 'loop-999', 'loop-996', 'a'].map((id) => store.get(id)));
    expect(kept.map((found) => found !== undefined)).toEqual([true, true, true, false, false]);
  });

  it('holds at most maxSessionsPerKey of one key: a key opening sessions in a loop pushes out its own, not another key’s', async () => {
    const store = new MemoryMcpSessionStore({ maxSessions: 100, maxSessionsPerKey: 3 });
    await store.set('other', record('key_b'));
    for (let i = 0; i < 50; i++) await store.set(`loop-${i}`, record('key_a'));
    expect(await store.get('other')).toBeDefined();
    const kept = await Promise.all(['loop-47', 'loop-48', 'loop-49', 'loop-46'].map((id) => store.get(id)));
    expect(kept.map((found) => found !== undefined)).toEqual([true, true, true, false]);
    // Ending one makes room without pushing out another.
    await store.delete('loop-47');
    await store.set('again', record('key_a'));
    for (const id of ['loop-48', 'loop-49', 'again']) expect(await store.get(id)).toBeDefined();
  });

  it('has documented defaults and rejects bad options', () => {
    expect(() => new MemoryMcpSessionStore()).not.toThrow();
    expect(() => new MemoryMcpSessionStore({ maxSessionsPerKey: -1 })).toThrow(/maxSessionsPerKey/);
    expect(() => new MemoryMcpSessionStore({ maxSessions: 0 })).toThrow(/maxSessions/);
    expect(() => new MemoryMcpSessionStore({ ttlSeconds: 1.5 })).toThrow(/ttlSeconds/);
  });
});

const targets = await redisTargets();
const prefix = `infergate-test-${randomBytes(4).toString('hex')}:`;

describe.each(targets)('RedisMcpSessionStore ($name)', (target) => {
  const { connection } = target;
  afterAll(() => target.close(prefix));

  it('keeps one string key per session with the TTL; get renews it; delete removes it', async () => {
    const store = new RedisMcpSessionStore({ ...connection, keyPrefix: prefix, ttlSeconds: 600 });
    try {
      const id = randomUUID();
      await store.set(id, record());
      const raw = target.client();
      const key = `${prefix}mcp-session:${id}`;
      expect(await raw.type(key)).toBe('string');
      expect(JSON.parse((await raw.get(key))!)).toEqual(record());
      expect(await raw.ttl(key)).toBeGreaterThan(590);
      await raw.expire(key, 5);
      expect(await store.get(id)).toEqual(record());
      expect(await raw.ttl(key)).toBeGreaterThan(590);
      await store.delete(id);
      expect(await raw.exists(key)).toBe(0);
      expect(await store.get(id)).toBeUndefined();
    } finally {
      await store.close();
    }
  });

  it('update writes only a session that still exists (SET XX), renewing its TTL: a deleted one stays gone', async () => {
    const store = new RedisMcpSessionStore({ ...connection, keyPrefix: prefix, ttlSeconds: 600 });
    try {
      const id = randomUUID();
      const raw = target.client();
      const key = `${prefix}mcp-session:${id}`;
      await store.set(id, record());
      await raw.expire(key, 5);
      await store.update(id, { ...record(), logLevel: 'error' });
      expect((await store.get(id))?.logLevel).toBe('error');
      expect(await raw.ttl(key)).toBeGreaterThan(590);
      await store.delete(id);
      await store.update(id, { ...record(), logLevel: 'debug' });
      expect(await raw.exists(key)).toBe(0);
      expect(await store.get(id)).toBeUndefined();
    } finally {
      await store.close();
    }
  });

  it('keeps fields it does not check, so a field added to the record survives the round trip', async () => {
    const store = new RedisMcpSessionStore({ ...connection, keyPrefix: prefix });
    try {
      const id = randomUUID();
      const extended = { ...record(), clientInfo: { name: 'codex' }, upstream: { github: { sessionId: 'up-1', resumeToken: 'r' } } };
      await store.set(id, extended);
      expect(await store.get(id)).toEqual(extended);
    } finally {
      await store.close();
    }
  });

  it('holds at most maxSessionsPerKey of one key (an index per key): a key opening sessions in a loop deletes its own oldest, never another key’s', async () => {
    const store = new RedisMcpSessionStore({ ...connection, keyPrefix: prefix, maxSessionsPerKey: 3 });
    const raw = target.client();
    try {
      const keyId = `key/${randomUUID()}`;
      const other = randomUUID();
      await store.set(other, record(`${keyId}-other`));
      const ids = Array.from({ length: 20 }, () => randomUUID());
      for (const id of ids) await store.set(id, record(keyId));
      const alive = (await Promise.all(ids.map((id) => raw.exists(`${prefix}mcp-session:${id}`)))).filter(Boolean);
      expect(alive).toHaveLength(3);
      expect(await store.get(ids.at(-1)!)).toBeDefined();
      expect(await store.get(other)).toBeDefined();
      const index = `${prefix}mcp-sessions:${encodeURIComponent(keyId)}`;
      expect(await raw.zcard(index)).toBe(3);
      expect(await raw.ttl(index)).toBeGreaterThan(24 * 3600 - 60);
      // Ending a session takes it out of the index.
      await store.delete(ids.at(-1)!);
      expect(await raw.zscore(index, ids.at(-1)!)).toBeNull();
      expect(await raw.zcard(index)).toBe(2);
    } finally {
      await store.close();
    }
  });

  it('defaults to a day', async () => {
    const store = new RedisMcpSessionStore({ ...connection, keyPrefix: prefix });
    try {
      const id = randomUUID();
      await store.set(id, record());
      const ttl = await target.client().ttl(`${prefix}mcp-session:${id}`);
      expect(ttl).toBeGreaterThan(24 * 3600 - 60);
      expect(ttl).toBeLessThanOrEqual(24 * 3600);
    } finally {
      await store.close();
    }
  });

  it('a record that does not read back as one is no session (the client gets a 404), never a crash', async () => {
    const store = new RedisMcpSessionStore({ ...connection, keyPrefix: prefix });
    const raw = target.client();
    try {
      const corrupted = [
        '{"keyId":',
        'null',
        '[]',
        '"text"',
        '{"keyId":"k","protocolVersion":"v","createdAt":"now","upstream":{}}',
        '{"keyId":"k","protocolVersion":"v","createdAt":1,"upstream":[]}',
        '{"keyId":"k","protocolVersion":"v","createdAt":1,"upstream":{"github":{"sessionId":5}}}',
      ];
      for (const value of corrupted) {
        const id = randomUUID();
        await raw.set(`${prefix}mcp-session:${id}`, value);
        expect(await store.get(id), value).toBeUndefined();
      }
      expect(await store.get('x'.repeat(10_000))).toBeUndefined();
    } finally {
      await store.close();
    }
  });

  it('cancellations: one store publishes, the others hear it on <prefix>mcp-cancel; malformed or oversized messages are dropped', async () => {
    const channelPrefix = `${prefix}cancel-${randomUUID()}:`;
    const warnings: string[] = [];
    const logger = { info: () => {}, warn: (message: string) => void warnings.push(message), error: () => {} };
    const hearing = new RedisMcpSessionStore({ ...connection, keyPrefix: channelPrefix, logger });
    const telling = new RedisMcpSessionStore({ ...connection, keyPrefix: channelPrefix });
    try {
      const heard: unknown[] = [];
      const unsubscribe = hearing.subscribeCancels((notice) => void heard.push(notice));
      await hearing.ready();
      const raw = target.client();
      for (const garbage of ['not json', '{"sessionId":5,"requestId":1}', JSON.stringify({ sessionId: 's', requestId: 1, reason: 'x'.repeat(3000) })]) {
        await raw.publish(`${channelPrefix}mcp-cancel`, garbage);
      }
      telling.publishCancel({ sessionId: 'session-1', requestId: 'call-7', reason: 'user pressed Esc' });
      await vi.waitFor(() => expect(heard).toEqual([{ sessionId: 'session-1', requestId: 'call-7', reason: 'user pressed Esc' }]));
      expect(warnings).toEqual(['RedisMcpSessionStore: ignored a malformed message on the cancellation channel']);
      // Nor is one sent that no instance would read back (a client's megabyte-long request id):
      // the channel carries only the next, well-formed one.
      const onChannel: string[] = [];
      const listening = (target.client() as { duplicate(): ReturnType<typeof target.client> }).duplicate();
      listening.on('message', (_channel: string, message: string) => void onChannel.push(message));
      await listening.subscribe(`${channelPrefix}mcp-cancel`);
      try {
        // A listener still subscribed on the same store tells when the store has handled the next
        // message: the unsubscribed one must not have heard it by then.
        const stillHearing: unknown[] = [];
        hearing.subscribeCancels((notice) => void stillHearing.push(notice));
        telling.publishCancel({ sessionId: 'session-1', requestId: 'x'.repeat(1_000_000) });
        unsubscribe();
        telling.publishCancel({ sessionId: 'session-1', requestId: 8 });
        await vi.waitFor(() => expect(onChannel).toEqual(['{"sessionId":"session-1","requestId":8}']));
        await vi.waitFor(() => expect(stillHearing).toEqual([{ sessionId: 'session-1', requestId: 8 }]));
        expect(heard).toHaveLength(1);
      } finally {
        listening.disconnect();
      }
    } finally {
      await Promise.all([hearing.close(), telling.close()]);
    }
  });

  it('rejects within its timeout while Redis is down', async () => {
    const store = new RedisMcpSessionStore({ ...target.unreachable(await freePort()), keyPrefix: prefix, timeoutMs: 300 });
    try {
      await expect(store.get(randomUUID())).rejects.toThrow();
      await expect(store.set(randomUUID(), record())).rejects.toThrow();
    } finally {
      await store.close();
    }
  });

  it('rejects bad options', () => {
    expect(() => new RedisMcpSessionStore({ ...connection, ttlSeconds: 0 })).toThrow(/ttlSeconds/);
    expect(() => new RedisMcpSessionStore({ ...connection, maxSessionsPerKey: 0 })).toThrow(/maxSessionsPerKey/);
    expect(() => new RedisMcpSessionStore(undefined as never)).toThrow(/RedisMcpSessionStore/);
  });
});
