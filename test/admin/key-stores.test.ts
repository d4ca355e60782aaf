import pg from 'pg';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import type { KeyRecord } from '../../src/auth/key-store.js';
import { hashKeySecret, MANAGED_KEY_PREFIX, newKeySecret } from '../../src/admin/keys/key-secret.js';
import { InvalidCursorError, KeyRevokedError, type ManagedKeyStore } from '../../src/admin/keys/managed-key-store.js';
import { MemoryKeyStore } from '../../src/admin/keys/memory-key-store.js';
import { PostgresKeyStore } from '../../src/admin/keys/postgres-key-store.js';
import { RedisKeyStore } from '../../src/admin/keys/redis-key-store.js';
import { randomBytes } from 'node:crypto';
import { createGateway } from '../../src/gateway.js';
import { createLocalProvider } from '../../src/providers/local/local-provider.js';
import { testDatabase } from '../helpers/postgres.js';
import { recordingLogger } from '../helpers/recording-logger.js';
import { redisTargets, type RedisTarget } from '../redis/targets.js';
import { freePort } from '../helpers/serve.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const alice = { name: 'alice', address: '203.0.113.7' };
const context = { request: new Request('http://gateway.test/v1/models'), serverContext: undefined };

/** A store of the suite's own, empty, and what it keeps as one string (for the no-secret checks). */
interface KeyStoreSetup {
  store: ManagedKeyStore;
  /** Every row / value the store keeps, as text. */
  raw(): Promise<string>;
  close(): Promise<void>;
}

/** Until `check` holds, for at most `ms` (caches of the shared stores live up to 500 ms). */
async function eventually(check: () => Promise<boolean>, ms = 1500): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > deadline) return false;
    await sleep(25);
  }
}

const refused = (record: KeyRecord | undefined) => record === undefined || record.disabled === true;

/** The same behaviour for every managed key store. */
function keyStoreSuite(name: string, open: () => Promise<KeyStoreSetup>): void {
  describe(`ManagedKeyStore: ${name}`, () => {
    const opened: KeyStoreSetup[] = [];
    const fresh = async () => {
      const setup = await open();
      opened.push(setup);
      return setup;
    };
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((setup) => setup.close()));
    });

    it('makes a key that lookup finds; only its hash is kept and no output shows the secret or the hash', async () => {
      const { store, raw } = await fresh();
      const { key, secret } = await store.create({ name: 'ci', models: ['gpt-chat'], group: 'team-a', metadata: { owner: 'alice' } }, alice);
      expect(secret.startsWith(MANAGED_KEY_PREFIX)).toBe(true);
      expect(key).toMatchObject({ name: 'ci', models: ['gpt-chat'], group: 'team-a', disabled: false, prefix: secret.slice(0, 10) });
      expect(await store.lookup(secret, context)).toEqual({
        id: key.id,
        models: ['gpt-chat'],
        group: 'team-a',
        disabled: false,
        metadata: { owner: 'alice' },
      });
      expect(await store.lookup(`${secret}x`, context)).toBeUndefined();
      expect(await store.get(key.id)).toEqual(key);
      expect(await store.get('key_0000000000000000')).toBeUndefined();
      const shown = JSON.stringify([key, await store.get(key.id), await store.list({ limit: 10 }), await store.audit({ limit: 10 })]);
      expect(shown).not.toContain(secret);
      expect(shown).not.toContain(secret.slice(MANAGED_KEY_PREFIX.length));
      expect(shown).not.toContain(hashKeySecret(secret));
      const kept = await raw();
      expect(kept).toContain(key.id);
      expect(kept).not.toContain(secret.slice(MANAGED_KEY_PREFIX.length));
    });

    it('applies an update to what lookup answers; null clears a field', async () => {
      const { store } = await fresh();
      const { key, secret } = await store.create({ name: 'ci', models: ['gpt-chat'], limits: { requestsPerMinute: 5 } }, alice);
      await store.lookup(secret, context); // cached where the store caches
      const updated = await store.update(key.id, { models: ['gpt-chat', 'claude'], limits: null, name: null, disabled: true, mcp: ['github__get_*'] }, alice);
      expect(updated).toMatchObject({ id: key.id, models: ['gpt-chat', 'claude'], disabled: true, mcp: ['github__get_*'] });
      expect(updated).not.toHaveProperty('limits');
      expect(updated).not.toHaveProperty('name');
      expect(updated!.updatedAt).toBeGreaterThanOrEqual(key.updatedAt);
      expect(await store.get(key.id)).toEqual(updated);
      expect(await eventually(async () => (await store.lookup(secret, context))?.disabled === true)).toBe(true);
      expect(await store.lookup(secret, context)).toEqual({
        id: key.id,
        models: ['gpt-chat', 'claude'],
        group: 'default',
        disabled: true,
        mcp: ['github__get_*'],
      });
      expect(await store.update(key.id, { mcp: null }, alice)).not.toHaveProperty('mcp');
      expect(await store.get(key.id)).not.toHaveProperty('mcp');
      expect(await store.update('key_0000000000000000', { name: 'x' }, alice)).toBeUndefined();
    });

    it('rotates: the previous secret works during the grace period, then is refused', async () => {
      const { store, raw } = await fresh();
      const { key, secret: first } = await store.create({}, alice);
      const rotated = await store.rotate(key.id, { graceMs: 400 }, alice);
      expect(rotated!.key.previousExpiresAt).toBeGreaterThan(Date.now());
      expect(rotated!.key.prefix).toBe(rotated!.secret.slice(0, 10)); // the key people hold now
      expect(rotated!.secret).not.toBe(first);
      expect((await store.lookup(rotated!.secret, context))?.id).toBe(key.id);
      expect((await store.lookup(first, context))?.id).toBe(key.id);
      expect(await raw()).not.toContain(rotated!.secret.slice(MANAGED_KEY_PREFIX.length));
      await sleep(Math.max(0, rotated!.key.previousExpiresAt! - Date.now()) + 20);
      expect(await store.lookup(first, context)).toBeUndefined();
      expect((await store.lookup(rotated!.secret, context))?.id).toBe(key.id);
      expect(await store.get(key.id)).not.toHaveProperty('previousExpiresAt');
    });

    it('rotates with no grace at once, and keeps only the newest previous secret', async () => {
      const { store } = await fresh();
      const { key, secret: first } = await store.create({}, alice);
      await store.lookup(first, context);
      const second = await store.rotate(key.id, { graceMs: 60_000 }, alice);
      const third = await store.rotate(key.id, { graceMs: 60_000 }, alice);
      expect(await store.lookup(first, context)).toBeUndefined();
      expect((await store.lookup(second!.secret, context))?.id).toBe(key.id);
      expect((await store.lookup(third!.secret, context))?.id).toBe(key.id);
      const fourth = await store.rotate(key.id, { graceMs: 0 }, alice);
      expect(fourth!.key).not.toHaveProperty('previousExpiresAt');
      expect(await store.lookup(second!.secret, context)).toBeUndefined();
      expect(await store.lookup(third!.secret, context)).toBeUndefined();
      expect((await store.lookup(fourth!.secret, context))?.id).toBe(key.id);
      expect(await store.rotate('key_0000000000000000', { graceMs: 0 }, alice)).toBeUndefined();
    });

    it('refuses a revoked key at once, and will not change or rotate it', async () => {
      const { store } = await fresh();
      const { key, secret } = await store.create({ name: 'gone' }, alice);
      const rotated = await store.rotate(key.id, { graceMs: 60_000 }, alice);
      expect((await store.lookup(secret, context))?.id).toBe(key.id);
      const revoked = await store.revoke(key.id, alice);
      expect(revoked!.revokedAt).toBeGreaterThan(0);
      expect(revoked).not.toHaveProperty('previousExpiresAt');
      expect(refused(await store.lookup(rotated!.secret, context))).toBe(true);
      expect(refused(await store.lookup(secret, context))).toBe(true);
      await expect(store.update(key.id, { name: 'back' }, alice)).rejects.toBeInstanceOf(KeyRevokedError);
      await expect(store.rotate(key.id, { graceMs: 0 }, alice)).rejects.toBeInstanceOf(KeyRevokedError);
      // Revoking again changes nothing and records nothing.
      expect(await store.revoke(key.id, alice)).toEqual(revoked);
      expect((await store.audit({ limit: 10, keyId: key.id })).data.map((entry) => entry.action)).toEqual(['revoke', 'rotate', 'create']);
      expect((await store.list({ limit: 10 })).data).toEqual([]);
      expect((await store.list({ limit: 10, includeRevoked: true })).data).toEqual([revoked]);
      expect(await store.revoke('key_0000000000000000', alice)).toBeUndefined();
    });

    it('keeps every one of concurrent changes of one key, each audited against the one before', async () => {
      const { store } = await fresh();
      const { key } = await store.create({}, alice);
      const names = Array.from({ length: 8 }, (_, index) => `n${index}`);
      await Promise.all(names.map((name) => store.update(key.id, { name }, alice)));
      const { data } = await store.audit({ limit: 20, keyId: key.id });
      const updates = data.filter((entry) => entry.action === 'update').reverse();
      expect(updates.map((entry) => entry.after?.name).sort()).toEqual(names);
      const chain = [data.at(-1)!.after, ...updates.map((entry) => entry.after)];
      expect(updates.map((entry) => entry.before)).toEqual(chain.slice(0, -1));
      expect((await store.get(key.id))?.name).toBe(updates.at(-1)!.after?.name);
    });

    it('lists newest first across pages with opaque cursors', async () => {
      const { store } = await fresh();
      const made: string[] = [];
      for (let index = 0; index < 7; index++) {
        made.push((await store.create({ name: `k${index}` }, alice)).key.id);
        if (index % 2 === 0) await sleep(2); // some share a millisecond, some do not
      }
      await store.revoke(made[3]!, alice);
      const seen: string[] = [];
      let cursor: string | undefined;
      const sizes: number[] = [];
      do {
        const page = await store.list({ limit: 2, ...(cursor ? { cursor } : {}) });
        sizes.push(page.data.length);
        seen.push(...page.data.map((key) => key.name!));
        cursor = page.next;
      } while (cursor);
      expect(sizes).toEqual([2, 2, 2]);
      expect(seen).toEqual(['k6', 'k5', 'k4', 'k2', 'k1', 'k0']);
      const all = await store.list({ limit: 3, includeRevoked: true });
      expect(all.data.map((key) => key.name)).toEqual(['k6', 'k5', 'k4']);
      const rest = await store.list({ limit: 3, includeRevoked: true, cursor: all.next });
      expect(rest.data.map((key) => key.name)).toEqual(['k3', 'k2', 'k1']);
      const last = await store.list({ limit: 3, includeRevoked: true, cursor: rest.next });
      expect(last.data.map((key) => key.name)).toEqual(['k0']);
      expect(last.next).toBeUndefined();
    });

    it('rejects a cursor it did not make', async () => {
      const { store } = await fresh();
      for (let index = 0; index < 3; index++) await store.create({}, alice);
      const page = await store.list({ limit: 1 });
      const audit = await store.audit({ limit: 1 });
      const forged = [
        'not a cursor',
        'AAAA',
        Buffer.from('{"a":1}').toString('base64url'),
        Buffer.from('["keys","1; DROP TABLE x"]').toString('base64url'),
        Buffer.from('["keys",-1]').toString('base64url'),
        audit.next!,
        `${page.next!}x`,
        'A'.repeat(5000),
      ];
      for (const cursor of forged) {
        await expect(store.list({ limit: 1, cursor }), cursor).rejects.toBeInstanceOf(InvalidCursorError);
      }
      await expect(store.audit({ limit: 1, cursor: page.next! })).rejects.toBeInstanceOf(InvalidCursorError);
      await expect(store.audit({ limit: 1, cursor: Buffer.from('["audit",0]').toString('base64url') })).rejects.toBeInstanceOf(InvalidCursorError);
    });

    it('audits every change in order, with who, before and after, paged and by key', async () => {
      const { store } = await fresh();
      const bob = { name: 'bob' };
      const { key } = await store.create({ name: 'a' }, alice);
      const other = await store.create({ name: 'other' }, bob);
      const updated = await store.update(key.id, { name: 'b' }, bob);
      const rotated = await store.rotate(key.id, { graceMs: 0 }, alice);
      const revoked = await store.revoke(key.id, alice);
      const all = await store.audit({ limit: 10 });
      expect(all.data.map((entry) => [entry.action, entry.keyId, entry.actor])).toEqual([
        ['revoke', key.id, 'alice'],
        ['rotate', key.id, 'alice'],
        ['update', key.id, 'bob'],
        ['create', other.key.id, 'bob'],
        ['create', key.id, 'alice'],
      ]);
      const [revokeEntry, rotateEntry, updateEntry, , createEntry] = all.data;
      expect(createEntry).toMatchObject({ address: '203.0.113.7', after: key });
      expect(createEntry).not.toHaveProperty('before');
      expect(updateEntry).toMatchObject({ before: key, after: updated });
      expect(updateEntry).not.toHaveProperty('address');
      expect(rotateEntry).toMatchObject({ before: updated, after: rotated!.key });
      expect(revokeEntry).toMatchObject({ before: rotated!.key, after: revoked });
      for (const entry of all.data) expect(entry.at).toBeGreaterThanOrEqual(key.createdAt);
      const ids = all.data.map((entry) => entry.id);
      expect(new Set(ids).size).toBe(5);
      const first = await store.audit({ limit: 2, keyId: key.id });
      expect(first.data.map((entry) => entry.action)).toEqual(['revoke', 'rotate']);
      const second = await store.audit({ limit: 2, keyId: key.id, cursor: first.next });
      expect(second.data.map((entry) => entry.action)).toEqual(['update', 'create']);
      expect(second.next).toBeUndefined();
      expect(await store.audit({ limit: 10, keyId: 'key_0000000000000000' })).toEqual({ data: [] });
    });
  });
}

keyStoreSuite('memory', async () => {
  const store = new MemoryKeyStore();
  return {
    store,
    raw: async () => JSON.stringify(store, (_, value) => (value instanceof Map ? [...value] : value)),
    close: async () => {},
  };
});

describe('MemoryKeyStore', () => {
  it('keeps the newest audit entries up to its size', async () => {
    const store = new MemoryKeyStore({ auditSize: 3 });
    const { key } = await store.create({}, alice);
    for (let index = 0; index < 4; index++) await store.update(key.id, { name: `n${index}` }, alice);
    const { data } = await store.audit({ limit: 10 });
    expect(data.map((entry) => entry.after?.name)).toEqual(['n3', 'n2', 'n1']);
    expect(() => new MemoryKeyStore({ auditSize: 0 })).toThrow(/auditSize/);
  });
});

const database = await testDatabase();
let schemas = 0;
afterAll(async () => {
  await database.pool.query(
    `DROP SCHEMA IF EXISTS ${Array.from({ length: schemas }, (_, n) => `"${database.schema}_${n}"`).join(', ') || `"${database.schema}"`} CASCADE`,
  );
  await database.close();
});

/** Everything the store's tables hold, as text. */
async function postgresRows(schema: string): Promise<string> {
  const tables = ['infergate_keys', 'infergate_key_hashes', 'infergate_audit'];
  const dumps = await Promise.all(tables.map((table) => database.pool.query(`SELECT coalesce(json_agg(t), '[]')::text AS rows FROM "${schema}"."${table}" t`)));
  return dumps.map((dump) => dump.rows[0].rows as string).join('\n');
}

keyStoreSuite('postgres', async () => {
  const schema = `${database.schema}_${schemas++}`;
  const store = new PostgresKeyStore({ url: database.url, schema, maxConnections: 2 });
  return { store, raw: () => postgresRows(schema), close: () => store.close() };
});

describe('PostgresKeyStore', () => {
  it('keeps only hashes: the hash row names the key, the secret is nowhere', async () => {
    const schema = `${database.schema}_${schemas++}`;
    const store = new PostgresKeyStore({ url: database.url, schema });
    try {
      const { key, secret } = await store.create({ name: 'x' }, alice);
      const { rows } = await database.pool.query(`SELECT hash, key_id, expires_at FROM "${schema}".infergate_key_hashes`);
      expect(rows).toEqual([{ hash: hashKeySecret(secret), key_id: key.id, expires_at: null }]);
      const audit = await database.pool.query(`SELECT before::text, after::text FROM "${schema}".infergate_audit`);
      expect(JSON.stringify(audit.rows)).not.toContain(hashKeySecret(secret));
    } finally {
      await store.close();
    }
  });

  it('refuses a key revoked on another instance within a second, though this one had it cached', async () => {
    const schema = `${database.schema}_${schemas++}`;
    const here = new PostgresKeyStore({ url: database.url, schema });
    const there = new PostgresKeyStore({ url: database.url, schema });
    try {
      const { key, secret } = await here.create({}, alice);
      expect((await there.lookup(secret))?.id).toBe(key.id);
      expect((await there.lookup(secret))?.id).toBe(key.id); // from its cache now
      const listening = await database.pool.connect();
      const heard: string[] = [];
      listening.on('notification', (message) => heard.push(`${message.channel} ${message.payload}`));
      await listening.query('LISTEN infergate_keys');
      await here.revoke(key.id, alice);
      expect(await eventually(async () => heard.includes(`infergate_keys ${key.id}`), 1000)).toBe(true);
      await listening.query('UNLISTEN infergate_keys');
      listening.release();
      expect(await eventually(async () => refused(await there.lookup(secret)), 1000)).toBe(true);
      // An update made there is seen here too.
      const other = await there.create({}, alice);
      expect((await here.lookup(other.secret))?.disabled).toBe(false);
      await there.update(other.key.id, { disabled: true }, alice);
      expect(await eventually(async () => (await here.lookup(other.secret))?.disabled === true, 1000)).toBe(true);
    } finally {
      await Promise.all([here.close(), there.close()]);
    }
  });

  it('answers a burst of lookups of one key with a query or two, not one each', async () => {
    const schema = `${database.schema}_${schemas++}`;
    const pool = new pg.Pool({ connectionString: database.url, max: 4 });
    const store = new PostgresKeyStore({ pool, schema });
    try {
      const { key, secret } = await store.create({}, alice);
      const queries = vi.spyOn(pool, 'query');
      const burst = await Promise.all(Array.from({ length: 50 }, () => store.lookup(secret)));
      for (let index = 0; index < 20; index++) burst.push(await store.lookup(secret));
      expect(new Set(burst.map((record) => record?.id))).toEqual(new Set([key.id]));
      // One, or two when the notification of the create (its own) empties the cache during the burst.
      expect(queries.mock.calls.filter(([text]) => String(text).includes('infergate_key_hashes')).length).toBeLessThanOrEqual(2);
    } finally {
      await store.close();
      await pool.end();
    }
  });

  it('listens again when its notification connection is lost', async () => {
    const schema = `${database.schema}_${schemas++}`;
    const { logger, lines } = recordingLogger();
    const store = new PostgresKeyStore({ url: database.url, schema, logger });
    const listeners = async () =>
      (
        await database.pool.query(`SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND query = 'LISTEN infergate_keys'`, [
          `infergate key changes (${schema})`,
        ])
      ).rows.map((row) => row.pid as number);
    try {
      await store.create({}, alice);
      expect(await eventually(async () => (await listeners()).length === 1)).toBe(true);
      const [first] = await listeners();
      await database.pool.query('SELECT pg_terminate_backend($1)', [first]);
      expect(await eventually(async () => (await listeners()).some((pid) => pid !== first), 3000)).toBe(true);
      expect(lines.some((line) => line.level === 'warn' && line.message.includes('notifications are lost'))).toBe(true);
    } finally {
      await store.close();
    }
    expect(await listeners()).toEqual([]);
  });

  it('fails closed: a lookup throws when the database cannot be reached, and the gateway answers 503', async () => {
    const store = new PostgresKeyStore({ url: `postgres://postgres@127.0.0.1:${await freePort()}/infergate`, timeoutMs: 500 });
    const managedShape = newKeySecret();
    try {
      await expect(store.lookup(managedShape)).rejects.toThrow();
      // A key no store could have made is unknown without a database round trip.
      expect(await store.lookup('sk-config-key-0123456789')).toBeUndefined();
      expect(await store.lookup(`${managedShape}x`)).toBeUndefined();
      const gateway = createGateway({
        keys: store,
        providers: { local: createLocalProvider({ chunkDelayMs: 0 }) },
        models: [{ id: 'text', provider: 'local', upstreamModel: 'local-chat' }],
        logger: false,
      });
      const response = await gateway.fetch('http://gateway.test/v1/models', { headers: { authorization: `Bearer ${managedShape}` } });
      expect(response.status).toBe(503);
      expect(await response.json()).toMatchObject({ error: { code: 'key_store_unavailable' } });
    } finally {
      await store.close();
    }
  });

  it('checks its options', () => {
    expect(() => new PostgresKeyStore({ url: database.url, cacheTtlMs: 5000 })).toThrow(/cacheTtlMs/);
    expect(() => new PostgresKeyStore({ url: database.url, timeoutMs: 0 })).toThrow(/timeoutMs/);
    expect(() => new PostgresKeyStore({ url: database.url, schema: 'a;b' })).toThrow(/schema/);
  });
});

/** Every key under `prefix` and its value (strings, and sorted sets with their members), as text. */
async function redisValues(target: RedisTarget, prefix: string): Promise<string> {
  const redis = target.client();
  const values: string[] = [];
  for (const key of await target.keys(`${prefix}*`)) {
    const type = await redis.type(key);
    values.push(key, type === 'zset' ? (await redis.zrange(key, '0', '-1')).join('\n') : String(await redis.get(key)));
  }
  return values.join('\n');
}

async function dropPrefix(target: RedisTarget, prefix: string): Promise<void> {
  const redis = target.client();
  await Promise.all((await target.keys(`${prefix}*`)).map((key) => redis.del(key)));
}

const targets = await redisTargets();
afterAll(async () => {
  for (const target of targets) await target.close();
});

for (const target of targets) {
  const newPrefix = () => `test-keys-${randomBytes(4).toString('hex')}:`;

  keyStoreSuite(`redis (${target.name})`, async () => {
    const keyPrefix = newPrefix();
    const store = new RedisKeyStore({ ...target.connection, keyPrefix });
    return {
      store,
      raw: () => redisValues(target, keyPrefix),
      close: async () => {
        await store.close();
        await dropPrefix(target, keyPrefix);
      },
    };
  });

  describe(`RedisKeyStore (${target.name})`, () => {
    it('refuses a key revoked on another instance within a second, though this one had it cached', async () => {
      const keyPrefix = newPrefix();
      const here = new RedisKeyStore({ ...target.connection, keyPrefix });
      const there = new RedisKeyStore({ ...target.connection, keyPrefix });
      const listening = target.client();
      try {
        const { key, secret } = await here.create({}, alice);
        expect((await there.lookup(secret))?.id).toBe(key.id);
        expect((await there.lookup(secret))?.id).toBe(key.id); // from its cache now
        const heard: string[] = [];
        listening.on('message', (channel: string, message: string) => heard.push(`${channel} ${message}`));
        await listening.subscribe(`${keyPrefix}managed-keys`);
        await here.revoke(key.id, alice);
        expect(await eventually(async () => refused(await there.lookup(secret)), 1000)).toBe(true);
        expect(await eventually(async () => heard.includes(`${keyPrefix}managed-keys ${key.id}`), 1000)).toBe(true);
        const other = await there.create({}, alice);
        expect((await here.lookup(other.secret))?.disabled).toBe(false);
        await there.update(other.key.id, { disabled: true }, alice);
        expect(await eventually(async () => (await here.lookup(other.secret))?.disabled === true, 1000)).toBe(true);
      } finally {
        listening.disconnect();
        await Promise.all([here.close(), there.close()]);
        await dropPrefix(target, keyPrefix);
      }
    });

    it('answers a burst of lookups of one key with a read or two of each, not one each', async () => {
      const keyPrefix = newPrefix();
      const client = target.client();
      const store = new RedisKeyStore({ client, keyPrefix });
      try {
        const { key, secret } = await store.create({}, alice);
        const reads = vi.spyOn(client, 'get');
        const burst = await Promise.all(Array.from({ length: 50 }, () => store.lookup(secret)));
        for (let index = 0; index < 20; index++) burst.push(await store.lookup(secret));
        expect(new Set(burst.map((record) => record?.id))).toEqual(new Set([key.id]));
        // The hash, then the key: once, or twice when the create's own message empties the cache during the burst.
        expect(reads.mock.calls.length).toBeLessThanOrEqual(4);
      } finally {
        await store.close();
        await dropPrefix(target, keyPrefix);
      }
    });

    it('gives a previous secret an expiry in Redis too, and keeps only hashes', async () => {
      const keyPrefix = newPrefix();
      const store = new RedisKeyStore({ ...target.connection, keyPrefix });
      const redis = target.client();
      try {
        const { key, secret } = await store.create({}, alice);
        await store.rotate(key.id, { graceMs: 60_000 }, alice);
        const ttl = await redis.pttl(`${keyPrefix}{managed-keys}:hash:${hashKeySecret(secret)}`);
        expect(ttl).toBeGreaterThan(50_000);
        expect(ttl).toBeLessThanOrEqual(60_000);
        expect(await redisValues(target, keyPrefix)).not.toContain(secret);
        const audit = await redis.zrange(`${keyPrefix}{managed-keys}:audit`, '0', '-1');
        expect(audit).toHaveLength(2);
        expect(audit.join('\n')).not.toContain(hashKeySecret(secret));
      } finally {
        await store.close();
        await dropPrefix(target, keyPrefix);
      }
    });

    it('fails closed: a lookup throws when Redis cannot be reached', async () => {
      const store = new RedisKeyStore({ ...target.unreachable(await freePort()), timeoutMs: 300, logger: { info() {}, warn() {}, error() {} } });
      try {
        await expect(store.lookup(newKeySecret())).rejects.toThrow();
        // A key no store could have made is unknown without asking Redis.
        expect(await store.lookup('sk-config-key-0123456789')).toBeUndefined();
      } finally {
        await store.close();
      }
    });
  });
}

describe('RedisKeyStore options', () => {
  it('refuses a prefix that would break its hash tag', () => {
    expect(() => new RedisKeyStore({ url: 'redis://127.0.0.1:1', keyPrefix: 'a{b}' })).toThrow(/keyPrefix/);
  });
});
