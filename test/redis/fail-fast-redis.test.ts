import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { describe, expect, it, vi } from 'vitest';
import { FailFastRedis } from '../../src/redis/fail-fast-redis.js';
import { freePort } from '../helpers/serve.js';
import { hasTool } from '../media/helpers.js';

/**
 * The connection under the Redis limit engine and response store: while Redis is down every
 * call rejects at once (so the gateway can fail open or closed), and nothing is printed.
 */
/** Three calls each rejected within two seconds, and no ioredis error printed meanwhile. */
async function expectQuickRefusals(connection: FailFastRedis): Promise<void> {
  const printed = vi.spyOn(console, 'error');
  try {
    for (let i = 0; i < 3; i++) {
      const started = Date.now();
      await expect(connection.call((redis) => redis.get('infergate-test:k'))).rejects.toThrow();
      expect(Date.now() - started).toBeLessThan(2000);
    }
    // Let the client fail a reconnection or two.
    await sleep(300);
    expect(printed).not.toHaveBeenCalledWith(expect.stringContaining('[ioredis]'), expect.anything());
  } finally {
    printed.mockRestore();
  }
}

describe('FailFastRedis without Redis', () => {
  it.each([
    ['a single node', (port: number) => ({ url: `redis://127.0.0.1:${port}` })],
    ['a cluster', (port: number) => ({ cluster: { nodes: [`127.0.0.1:${port}`, `127.0.0.1:${port}`] } })],
    ['Sentinel', (port: number) => ({ sentinel: { sentinels: [`127.0.0.1:${port}`], name: 'mymaster' } })],
  ])('on %s: rejects quickly instead of hanging, and keeps connection errors to itself', async (_, where) => {
    const connection = new FailFastRedis({ ...where(await freePort()), timeoutMs: 1000, owner: 'Test' });
    try {
      await expectQuickRefusals(connection);
    } finally {
      await connection.close();
    }
  });

  it.skipIf(!hasTool('redis-server'))(
    'on a cluster that goes away while in use: calls reject within the timeout, nothing printed',
    async () => {
      // A cluster of its own (the shared one must stay up), on fixed ports: a node's cluster bus is
      // its port + 10000, which a random free port may not have.
      const dir = mkdtempSync(join(tmpdir(), 'infergate-cluster-'));
      const script = fileURLToPath(new URL('../../.ci/redis-cluster', import.meta.url));
      const nodes = execFileSync(script, ['start', dir, '7121', '7122', '7123'], { encoding: 'utf8' }).trim().split(',');
      const connection = new FailFastRedis({ cluster: { nodes }, timeoutMs: 1000, owner: 'Test' });
      try {
        await connection.call((redis) => redis.set('infergate-test:k', 'v'));
        expect(await connection.call((redis) => redis.get('infergate-test:k'))).toBe('v');
        execFileSync(script, ['stop', dir]);
        await expectQuickRefusals(connection);
      } finally {
        await connection.close();
        execFileSync(script, ['stop', dir]);
      }
    },
    30_000,
  );

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

  it('needs exactly one of a client, a url, a cluster or Sentinel, and a positive timeout', () => {
    expect(() => new FailFastRedis({ timeoutMs: 10, owner: 'Test' })).toThrow(
      'Test: pass `client` (an ioredis client or cluster), `url`, `cluster` or `sentinel`',
    );
    expect(() => new FailFastRedis({ url: 'redis://127.0.0.1:1', cluster: { nodes: ['127.0.0.1:1'] }, timeoutMs: 10, owner: 'Test' })).toThrow(
      'Test: pass only one of `url`, `cluster`: `client` (an ioredis client or cluster), `url`, `cluster` or `sentinel`',
    );
    expect(() => new FailFastRedis({ cluster: { nodes: [] }, timeoutMs: 10, owner: 'Test' })).toThrow('Test: cluster.nodes must list at least one host:port');
    expect(() => new FailFastRedis({ cluster: { nodes: ['::::'] }, timeoutMs: 10, owner: 'Test' })).toThrow('Test: cluster.nodes: "::::" is not host:port');
    expect(() => new FailFastRedis({ sentinel: { sentinels: ['127.0.0.1:1'], name: '' }, timeoutMs: 10, owner: 'Test' })).toThrow(/sentinel.name/);
    expect(() => new FailFastRedis({ url: 'redis://127.0.0.1:1', timeoutMs: 0, owner: 'Test' })).toThrow(/timeoutMs/);
  });
});
