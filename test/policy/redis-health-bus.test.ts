import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { Cluster, Redis } from 'ioredis';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { HealthNotice } from '../../src/policy/health-bus.js';
import { HEALTH_NOTICE_MAX_MS } from '../../src/policy/health-notice.js';
import type { RedisClient } from '../../src/redis/connection.js';
import { RedisHealthBus, type RedisHealthBusOptions } from '../../src/redis.js';
import { recordingLogger } from '../helpers/recording-logger.js';
import { freePort } from '../helpers/serve.js';
import { waitFor } from '../media/helpers.js';
import { redisTargets } from '../redis/targets.js';

/**
 * Deployment health shared through Redis: one bus's notices reach the others (not itself), an
 * instance that starts late reads the states still in force with the time they have left,
 * states expire, hostile messages on the channel are dropped, and a Redis that is down or drops
 * the connection never reaches the caller.
 */
const targets = await redisTargets();

describe.each(targets)('RedisHealthBus ($name)', (target) => {
  const prefix = `infergate-test-${randomUUID()}:`;
  const opened: RedisHealthBus[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((bus) => bus.close()));
  });
  afterAll(() => target.close(prefix));

  /** A bus on the target (unless `options` say where) under this file's prefix, closed after the test. */
  function bus(options: Partial<RedisHealthBusOptions> = {}): RedisHealthBus {
    const where = options.client || options.url || options.cluster ? {} : target.connection;
    const created = new RedisHealthBus({ ...where, keyPrefix: prefix, logger: recordingLogger().logger, ...options });
    opened.push(created);
    return created;
  }

  /** A bus with a listener that keeps what it hears, once subscribed. */
  async function listening(options: Partial<RedisHealthBusOptions> = {}): Promise<{ bus: RedisHealthBus; heard: HealthNotice[] }> {
    const heard: HealthNotice[] = [];
    const created = bus(options);
    created.subscribe((notice) => heard.push(notice));
    await created.ready();
    return { bus: created, heard };
  }

  const heardSome = (heard: HealthNotice[], count = 1) =>
    waitFor(
      async () => heard.length,
      (length) => length >= count,
    );

  it("carries one instance's notice to another, as it was sent", async () => {
    const a = bus();
    const { heard } = await listening();
    a.publish({ deployment: 'east', state: 'open', forMs: 30_000, from: 'instance-a' });
    await heardSome(heard);
    expect(heard).toEqual([{ deployment: 'east', state: 'open', forMs: 30_000, from: 'instance-a' }]);
  });

  it('does not give an instance its own notices back', async () => {
    const a = await listening();
    const b = await listening();
    a.bus.publish({ deployment: 'east', state: 'backoff', forMs: 2000, from: 'instance-a' });
    await heardSome(b.heard);
    // Both go through the node of the hash's slot, so a's echo would reach a before b's notice.
    b.bus.publish({ deployment: 'west', state: 'open', forMs: 2000, from: 'instance-b' });
    await heardSome(a.heard);
    expect(a.heard).toEqual([{ deployment: 'west', state: 'open', forMs: 2000, from: 'instance-b' }]);
    expect(b.heard).toEqual([{ deployment: 'east', state: 'backoff', forMs: 2000, from: 'instance-a' }]);
  });

  it('tells an instance that starts late the states in force, with the time they have left', async () => {
    const keyPrefix = `${prefix}late-${randomUUID()}:`;
    const a = bus({ keyPrefix });
    a.publish({ deployment: 'east', state: 'open', forMs: 60_000, from: 'instance-a' });
    a.publish({ deployment: 'east', state: 'backoff', forMs: 45_000, from: 'instance-a' });
    a.publish({ deployment: 'west', state: 'backoff', forMs: 30_000, from: 'instance-a' });
    a.publish({ deployment: 'north', state: 'open', forMs: 30_000, from: 'instance-a' });
    a.publish({ deployment: 'north', state: 'closed', from: 'instance-a' });
    const late = bus({ keyPrefix });
    const states = await waitFor(
      () => late.current(),
      (notices) => notices.length === 3,
    );
    const byName = Object.fromEntries(states.map((notice) => [`${notice.state} ${notice.deployment}`, notice]));
    expect(Object.keys(byName).sort()).toEqual(['backoff east', 'backoff west', 'open east']);
    for (const [name, total] of [
      ['open east', 60_000],
      ['backoff east', 45_000],
      ['backoff west', 30_000],
    ] as const) {
      expect(byName[name]).toMatchObject({ from: 'instance-a' });
      expect(byName[name]!.forMs).toBeGreaterThan(0);
      expect(byName[name]!.forMs).toBeLessThanOrEqual(total);
    }
    // Less time is left later on: the states count down by Redis's clock.
    const before = byName['open east']!.forMs!;
    await new Promise((resolve) => setTimeout(resolve, 20));
    const again = (await late.current()).find((notice) => notice.state === 'open')!;
    expect(again.forMs).toBeLessThan(before);
    // An instance does not read back its own states.
    expect(await a.current()).toEqual([]);
  });

  it('lets the hash expire with its longest state', async () => {
    const keyPrefix = `${prefix}expiry-${randomUUID()}:`;
    const key = `${keyPrefix}health`;
    const redis = target.client();
    bus({ keyPrefix }).publish({ deployment: 'east', state: 'open', forMs: 2000, from: 'instance-a' });
    const ttl = await waitFor(
      () => redis.pttl(key),
      (left) => left !== -2,
    );
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(2000);
    // Redis deletes it on its own: nothing reads it here.
    expect(
      await waitFor(
        () => redis.exists(key),
        (exists) => exists === 0,
      ),
    ).toBe(0);
  });

  it('drops from the hash a state whose time is over, and keeps the others', async () => {
    const keyPrefix = `${prefix}lapsed-${randomUUID()}:`;
    const a = bus({ keyPrefix });
    const { bus: reader, heard } = await listening({ keyPrefix });
    a.publish({ deployment: 'east', state: 'open', forMs: 60_000, from: 'instance-a' });
    a.publish({ deployment: 'west', state: 'backoff', forMs: 150, from: 'instance-a' });
    // Both written (each is stored before it is published).
    await heardSome(heard, 2);
    const left = await waitFor(
      () => reader.current(),
      (notices) => notices.length === 1,
    );
    expect(left).toMatchObject([{ deployment: 'east', state: 'open' }]);
    expect(await target.client().hkeys(`${keyPrefix}health`)).toEqual(['open|east']);
  });

  it('keeps at most 1000 states in Redis, and publishes the ones past that all the same', async () => {
    const keyPrefix = `${prefix}bounded-${randomUUID()}:`;
    const a = bus({ keyPrefix });
    const { heard } = await listening({ keyPrefix });
    // By fifties, well under the 100 that may wait to be sent (one heard may not have been counted sent yet).
    for (let sent = 0; sent < 1010; sent += 50) {
      for (let i = sent; i < Math.min(sent + 50, 1010); i++) a.publish({ deployment: `model-${i}`, state: 'backoff', forMs: 60_000, from: 'instance-a' });
      await heardSome(heard, Math.min(sent + 50, 1010));
    }
    const redis = target.client();
    expect(await redis.hlen(`${keyPrefix}health`)).toBe(1000);
    expect(await bus({ keyPrefix }).current()).toHaveLength(1000);
  });

  it('sends at most 100 notices at a time, in order, and drops (and logs) the ones past that', async () => {
    const recorded = recordingLogger();
    const a = bus({ logger: recorded.logger });
    const { heard } = await listening();
    for (let i = 0; i < 150; i++) a.publish({ deployment: `model-${i}`, state: 'open', forMs: 1000, from: 'instance-a' });
    await heardSome(heard, 100);
    a.publish({ deployment: 'after', state: 'open', forMs: 1000, from: 'instance-a' });
    await heardSome(heard, 101);
    expect(heard.map((notice) => notice.deployment)).toEqual([...Array.from({ length: 100 }, (_, i) => `model-${i}`), 'after']);
    expect(recorded.lines.filter((line) => line.message.includes('was dropped'))).toHaveLength(1);
  });

  it('drops malformed and hostile messages on the channel, and cuts a long forMs to the limit', async () => {
    const recorded = recordingLogger();
    const { heard } = await listening({ logger: recorded.logger });
    const raw = await oneNode(target.client());
    const channel = `${prefix}health`;
    const hostile = [
      'not json',
      'null',
      '[]',
      '"open"',
      JSON.stringify({ deployment: 'east', state: 'open', forMs: -5, from: 'x' }),
      JSON.stringify({ deployment: 'east', state: 'open', forMs: '5000', from: 'x' }),
      JSON.stringify({ deployment: 'east', state: 'open', from: 'x' }),
      JSON.stringify({ deployment: 'east', state: 'melted', forMs: 5000, from: 'x' }),
      JSON.stringify({ deployment: '', state: 'open', forMs: 5000, from: 'x' }),
      JSON.stringify({ deployment: 'e'.repeat(513), state: 'open', forMs: 5000, from: 'x' }),
      JSON.stringify({ deployment: 'east', state: 'open', forMs: 5000 }),
      JSON.stringify({ deployment: { id: 'east' }, state: 'open', forMs: 5000, from: 'x' }),
      JSON.stringify({ deployment: 'east', state: 'open', forMs: 5000, from: 'x', padding: 'p'.repeat(5000) }),
    ];
    for (const message of hostile) await raw.publish(channel, message);
    await raw.publish(channel, '{"deployment":"east","state":"open","forMs":1e15,"from":"x","__proto__":{"polluted":true}}');
    await raw.publish(channel, JSON.stringify({ deployment: 'east', state: 'closed', forMs: 5000, from: 'x', extra: 1 }));
    await heardSome(heard, 2);
    expect(heard).toEqual([
      { deployment: 'east', state: 'open', forMs: HEALTH_NOTICE_MAX_MS, from: 'x' },
      { deployment: 'east', state: 'closed', from: 'x' },
    ]);
    // Told once, not once a message.
    const warnings = recorded.lines.filter((line) => line.message.includes('malformed message'));
    expect(warnings).toHaveLength(1);
  });

  it('keeps calling the other listeners when one throws', async () => {
    const a = bus();
    const b = bus();
    const heard: HealthNotice[] = [];
    b.subscribe(() => {
      throw new Error('listener bug');
    });
    b.subscribe((notice) => heard.push(notice));
    await b.ready();
    a.publish({ deployment: 'east', state: 'open', forMs: 1000, from: 'instance-a' });
    await heardSome(heard);
    expect(heard).toHaveLength(1);
  });

  it('subscribes again after Redis dropped the connection', async () => {
    const connectionName = `health-test-${randomUUID()}`;
    const client =
      target.name === 'cluster'
        ? new Cluster((target.connection as { cluster: { nodes: string[] } }).cluster.nodes, { redisOptions: { connectionName } })
        : new Redis((target.connection as { url: string }).url, { connectionName });
    try {
      const a = bus();
      const { heard } = await listening({ client });
      expect(await killClients(target.client(), connectionName)).toBeGreaterThan(0);
      // Published until heard: the subscriber reconnects on its own, whenever that is.
      const notice = { deployment: 'east', state: 'open', forMs: 1000, from: 'instance-a' } as const;
      await waitFor(
        async () => {
          a.publish(notice);
          return heard.length;
        },
        (length) => length > 0,
      );
      expect(heard[0]).toEqual(notice);
    } finally {
      client.disconnect();
    }
  });

  it('while Redis is down: publish returns at once, current() answers [], and each is logged once', async () => {
    const recorded = recordingLogger();
    const down = bus({ ...target.unreachable(await freePort()), timeoutMs: 200, logger: recorded.logger });
    expect(() => {
      for (let i = 0; i < 3; i++) down.publish({ deployment: 'east', state: 'open', forMs: 1000, from: 'instance-a' });
    }).not.toThrow();
    expect(await down.current()).toEqual([]);
    expect(await down.current()).toEqual([]);
    await waitFor(
      async () => recorded.lines.length,
      (length) => length >= 2,
    );
    const messages = recorded.lines.map((line) => line.message);
    expect(messages.filter((message) => message.includes('could not publish'))).toHaveLength(1);
    expect(messages.filter((message) => message.includes('could not read'))).toHaveLength(1);
  });
});

describe('RedisHealthBus started while Redis is down', () => {
  it('subscribes once Redis comes up', async () => {
    const port = await freePort();
    const options = { url: `redis://127.0.0.1:${port}`, logger: recordingLogger().logger };
    const listener = new RedisHealthBus(options);
    const publisher = new RedisHealthBus(options);
    const heard: HealthNotice[] = [];
    listener.subscribe((notice) => heard.push(notice));
    // On the real clock even under .ci/shifted-clock (libfaketime hangs a starting redis-server; nothing here depends on the date).
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => name !== 'LD_PRELOAD' && !name.startsWith('FAKETIME')));
    const server = spawn('redis-server', ['--bind', '127.0.0.1', '--port', String(port), '--save', '', '--appendonly', 'no'], { stdio: 'ignore', env });
    try {
      await listener.ready();
      // Published until heard: the publisher's own connection comes back when it does.
      const notice = { deployment: 'east', state: 'open', forMs: 1000, from: 'instance-a' } as const;
      await waitFor(
        async () => {
          publisher.publish(notice);
          return heard.length;
        },
        (length) => length > 0,
      );
      expect(heard[0]).toEqual(notice);
    } finally {
      await Promise.all([listener.close(), publisher.close()]);
      server.kill('SIGTERM');
      await new Promise((resolve) => server.once('exit', resolve));
    }
  });
});

/** One node's connection: its messages reach subscribers in the order they were published. */
async function oneNode(client: RedisClient): Promise<Redis> {
  if (!(client instanceof Cluster)) return client;
  if (client.status !== 'ready') await new Promise((resolve) => client.once('ready', resolve));
  return client.nodes('master')[0]!;
}

/** Closes, on every primary, the connections whose name holds `name`; returns how many. */
async function killClients(client: RedisClient, name: string): Promise<number> {
  if (client instanceof Cluster && client.status !== 'ready') await new Promise((resolve) => client.once('ready', resolve));
  const nodes = client instanceof Cluster ? client.nodes('master') : [client];
  let killed = 0;
  for (const node of nodes) {
    const list = (await node.client('LIST')) as string;
    for (const line of list.split('\n')) {
      const id = /(?:^| )id=(\d+)/.exec(line)?.[1];
      if (id && line.includes(name)) killed += Number(await node.client('KILL', 'ID', id));
    }
  }
  return killed;
}
