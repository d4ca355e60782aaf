import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { describe, expect, it, vi } from 'vitest';
import { FailFastRedis } from '../../src/redis/fail-fast-redis.js';
import { freePort } from '../helpers/serve.js';

/**
 * The connection under the Redis limit engine and response store: while Redis is down every
 * call rejects at once (so the gateway can fail open or closed), and nothing is printed.
 */
describe('FailFastRedis without Redis', () => {
  it('rejects quickly instead of hanging, and keeps connection errors to itself', async () => {
    const printed = vi.spyOn(console, 'error');
    const connection = new FailFastRedis({ url: `redis://127.0.0.1:${await freePort()}`, timeoutMs: 1000, owner: 'Test' });
    try {
      for (let i = 0; i < 3; i++) {
        const started = Date.now();
        await expect(connection.call((redis) => redis.get('k'))).rejects.toThrow();
        expect(Date.now() - started).toBeLessThan(2000);
      }
      // Let the client fail a reconnection or two.
      await sleep(300);
      expect(printed).not.toHaveBeenCalledWith(expect.stringContaining('[ioredis]'), expect.anything());
    } finally {
      printed.mockRestore();
      await connection.close();
    }
  });

  it('bounds calls on a client passed in that would queue them while Redis is down', async () => {
    const queueing = new Redis({ port: await freePort(), host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: null });
    queueing.on('error', () => {});
    const connection = new FailFastRedis({ client: queueing, timeoutMs: 300, owner: 'Test' });
    try {
      await expect(connection.call((redis) => redis.get('k'))).rejects.toThrow(/Test: Redis did not answer within 300 ms/);
    } finally {
      queueing.disconnect();
    }
  });

  it('needs a client or a url, and a positive timeout', () => {
    expect(() => new FailFastRedis({ timeoutMs: 10, owner: 'Test' })).toThrow(/client.*url/);
    expect(() => new FailFastRedis({ url: 'redis://127.0.0.1:1', timeoutMs: 0, owner: 'Test' })).toThrow(/timeoutMs/);
  });
});
