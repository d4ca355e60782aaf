import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HealthNotice } from '../../src/policy/health-bus.js';
import { RedisHealthBus, RedisLimitEngine, RedisResponseStore, RedisUsageStore } from '../../src/redis.js';
import { recordingLogger } from '../helpers/recording-logger.js';
import { waitFor } from '../media/helpers.js';
import { freePort } from '../helpers/serve.js';
import { type RedisHandle, startRedis } from '../media/helpers.js';

/**
 * The stores reach their Redis through a real Sentinel (`redis-server --sentinel`) that watches
 * the single node the other Redis suites use, under the name `infergate-test`: the client asks
 * the Sentinel for the primary's address, then talks to the primary.
 */
let redis: RedisHandle;
let sentinel: ChildProcess;
let sentinelPort: number;
let dir: string;
const prefix = `infergate-test-${randomBytes(4).toString('hex')}:`;

beforeAll(async () => {
  const handle = await startRedis();
  if (!handle) throw new Error('the Sentinel suite needs Redis: set REDIS_URL or install redis-server');
  redis = handle;
  const primary = new URL(redis.url);
  sentinelPort = await freePort();
  dir = mkdtempSync(join(tmpdir(), 'infergate-sentinel-'));
  // A Sentinel rewrites its config file, so it gets one of its own.
  const config = join(dir, 'sentinel.conf');
  writeFileSync(
    config,
    [`port ${sentinelPort}`, 'bind 127.0.0.1', `dir ${dir}`, `sentinel monitor infergate-test ${primary.hostname} ${primary.port || 6379} 1`, ''].join('\n'),
  );
  // On the real clock even under .ci/shifted-clock (libfaketime hangs a starting redis-server; nothing here depends on the date).
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => name !== 'LD_PRELOAD' && !name.startsWith('FAKETIME')));
  sentinel = spawn('redis-server', [config, '--sentinel'], { stdio: 'ignore', env });
  const probe = new Redis({ port: sentinelPort, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => 50 });
  probe.on('error', () => {});
  try {
    for (let attempt = 0; attempt < 100; attempt++) {
      const address = await probe.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', 'infergate-test').catch(() => null);
      if (address) return;
      await sleep(50);
    }
    throw new Error('the Sentinel never named the primary');
  } finally {
    probe.disconnect();
  }
});

afterAll(async () => {
  sentinel?.kill('SIGTERM');
  if (sentinel && sentinel.exitCode === null) await new Promise((resolve) => sentinel.once('exit', resolve));
  if (dir) rmSync(dir, { recursive: true, force: true });
  const cleanup = new Redis(redis.url);
  const leftovers = await cleanup.keys(`${prefix}*`);
  if (leftovers.length > 0) await cleanup.del(...leftovers);
  cleanup.disconnect();
  await redis?.stop();
});

const through = () => ({ sentinel: { sentinels: [`127.0.0.1:${sentinelPort}`], name: 'infergate-test' }, keyPrefix: prefix });

describe('Redis stores through Sentinel', () => {
  it('store and read responses, usage and limits on the primary the Sentinel names', async () => {
    const responses = new RedisResponseStore(through());
    const usage = new RedisUsageStore(through());
    const limits = new RedisLimitEngine({ ...through(), windowMs: 3_600_000 });
    const direct = new Redis(redis.url);
    try {
      const id = `resp_${randomBytes(6).toString('hex')}`;
      const response = { id, keyId: 'k', model: 'm', items: [{ type: 'message', id: `msg_${id}`, content: 'hi' }], createdAt: 1 };
      await responses.put(response);
      expect(await responses.get(id)).toEqual(response);
      expect(await responses.getItems('k', [`msg_${id}`])).toEqual([response.items[0]]);
      // Written on the primary itself.
      expect(JSON.parse((await direct.get(`${prefix}response:${id}`))!)).toEqual(response);

      await usage.add('k', '2026-04-01', 'm', { requests: 1, inputTokens: 2, outputTokens: 3, costUsd: 0 });
      expect(await usage.list('k', '2026-04-01', '2026-04-01')).toEqual([
        { date: '2026-04-01', model: 'm', requests: 1, inputTokens: 2, outputTokens: 3, costUsd: 0 },
      ]);

      const key = `key_${randomBytes(6).toString('hex')}`;
      const admitted = await Promise.all([0, 1, 2].map(() => limits.admit(key, { requestsPerMinute: 2 }, Date.now())));
      expect(admitted.filter((result) => result.allowed)).toHaveLength(2);
    } finally {
      direct.disconnect();
      await Promise.all([responses.close(), usage.close(), limits.close()]);
    }
  });

  it('carry health notices between two buses, on a subscriber connection found through the Sentinel too', async () => {
    const [publisher, listener] = [0, 1].map(() => new RedisHealthBus({ ...through(), logger: recordingLogger().logger }));
    const direct = new Redis(redis.url);
    try {
      const heard: HealthNotice[] = [];
      listener!.subscribe((notice) => heard.push(notice));
      await listener!.ready();
      const notice = { deployment: 'east', state: 'open', forMs: 5000, from: 'instance-a' } as const;
      publisher!.publish(notice);
      await waitFor(
        async () => heard.length,
        (length) => length > 0,
      );
      expect(heard).toEqual([notice]);
      // Kept on the primary itself, for instances that start later.
      expect(await direct.hkeys(`${prefix}health`)).toEqual(['open|east']);
    } finally {
      direct.disconnect();
      await Promise.all([publisher!.close(), listener!.close()]);
    }
  });
});
