import * as v from 'valibot';
import { flag, nonNegativeInteger, positiveInteger, strictObject, text } from './config-fields.js';
import type { RedisClusterOptions, RedisSentinelOptions } from './redis/connection.js';

/**
 * Where the config file's stores live (docs/configuration.md): memory, Redis (one of `url`,
 * `cluster`, `sentinel`) or PostgreSQL, told apart by `type`, with each store's own fields.
 */

/** A Redis store from the file: where its Redis is (one of `url`, `cluster`, `sentinel`) and its key prefix. */
export type RedisStoreConfig = {
  url?: string | undefined;
  cluster?: RedisClusterOptions | undefined;
  sentinel?: RedisSentinelOptions | undefined;
  keyPrefix?: string | undefined;
};

/** A Redis Cluster's seed nodes (`RedisClusterOptions`). */
const RedisClusterSchema = strictObject({
  nodes: v.pipe(v.array(text, 'expected an array of "host:port" strings'), v.minLength(1, 'expected at least one "host:port"')),
  username: v.optional(text),
  password: v.optional(text),
  tls: v.optional(flag),
});

/** Sentinels and the primary they watch (`RedisSentinelOptions`). */
const RedisSentinelSchema = strictObject({
  sentinels: v.pipe(v.array(text, 'expected an array of "host:port" strings'), v.minLength(1, 'expected at least one "host:port"')),
  name: text,
  username: v.optional(text),
  password: v.optional(text),
  sentinelUsername: v.optional(text),
  sentinelPassword: v.optional(text),
  db: v.optional(nonNegativeInteger),
  tls: v.optional(flag),
});

/** A Redis store from the file: one of `url`, `cluster` or `sentinel` (src/redis/connection.ts), `keyPrefix`?, and the store's own fields. */
export function redisStore<const E extends v.ObjectEntries>(fields: E) {
  return strictObject({
    type: v.literal('redis'),
    url: v.optional(text),
    cluster: v.optional(RedisClusterSchema),
    sentinel: v.optional(RedisSentinelSchema),
    keyPrefix: v.optional(text),
    ...fields,
  });
}

/** A PostgreSQL store from the file: its database URL, the schema of its tables, and the store's own fields. */
export function postgresStore<const E extends v.ObjectEntries>(fields: E) {
  return strictObject({
    type: v.literal('postgres'),
    url: v.pipe(v.string('expected a postgres:// URL'), v.regex(/^postgres(ql)?:\/\//, 'expected a postgres:// URL')),
    schema: v.optional(v.pipe(text, v.regex(/^[A-Za-z_][A-Za-z0-9_]{0,62}$/, 'expected a plain SQL identifier (letters, digits and _)'))),
    ...fields,
  });
}

const memoryStore = strictObject({ type: v.literal('memory') });

/** One of a store's kinds, told apart by `type`; a Redis one needs exactly one location. */
export function storeOf<const O extends v.VariantOptions<'type'>>(kinds: O, expected: string) {
  return v.optional(
    v.pipe(
      v.variant('type', kinds, expected),
      v.check(
        (store) => (store as { type: string }).type !== 'redis' || oneRedisLocation(store as RedisStoreConfig),
        'a redis store needs exactly one of "url", "cluster" ({ "nodes": ["host:port", …] }) or "sentinel" ({ "sentinels": ["host:port", …], "name" })',
      ),
    ),
  );
}

/** Where a store lives: `{ "type": "memory" }` (default) or `{ "type": "redis", … }` with the store's own fields. */
export function memoryOrRedis<const E extends v.ObjectEntries>(redisFields: E) {
  return storeOf([memoryStore, redisStore(redisFields)], 'expected { "type": "memory" } or { "type": "redis", "url": "redis://…" }');
}

/** Where MCP client sessions live: memory (default) or Redis, shared by every instance. */
export const McpSessionStoreSchema = storeOf(
  [
    strictObject({
      type: v.literal('memory'),
      ttlSeconds: v.optional(positiveInteger),
      maxSessions: v.optional(positiveInteger),
      maxSessionsPerKey: v.optional(positiveInteger),
    }),
    redisStore({ ttlSeconds: v.optional(positiveInteger), maxSessionsPerKey: v.optional(positiveInteger) }),
  ],
  'expected { "type": "memory" } or { "type": "redis", "url": "redis://…" }',
);

/** Prompts and answers in the request log (`captureContent`): `true`, or `{ "maxBytes" }` of each. */
export const ContentSchema = v.union(
  [flag, strictObject({ maxBytes: v.optional(v.pipe(positiveInteger, v.minValue(64, 'expected a number >= 64'))) })],
  'expected true, false or { "maxBytes": … }',
);

/** Where the admin API keeps the keys it makes: memory (default), PostgreSQL or Redis. */
export const KeyStoreSchema = storeOf(
  [memoryStore, postgresStore({}), redisStore({})],
  'expected { "type": "memory" }, { "type": "postgres", "url": "postgres://…" } or { "type": "redis", "url": "redis://…" }',
);

/** Where each request's row goes: a ring in memory (default) or PostgreSQL. */
export const RequestLogSchema = storeOf(
  [
    strictObject({
      type: v.literal('memory'),
      size: v.optional(v.pipe(positiveInteger, v.maxValue(1_000_000, 'expected at most 1000000'))),
      content: v.optional(ContentSchema),
    }),
    postgresStore({
      batchSize: v.optional(v.pipe(positiveInteger, v.maxValue(10_000, 'expected at most 10000'))),
      flushMs: v.optional(positiveInteger),
      queueSize: v.optional(positiveInteger),
      toolCallQueueSize: v.optional(positiveInteger),
      overflow: v.optional(v.picklist(['drop', 'wait'], 'expected "drop" or "wait"')),
      retentionDays: v.optional(positiveInteger),
      content: v.optional(ContentSchema),
    }),
  ],
  'expected { "type": "memory" } or { "type": "postgres", "url": "postgres://…" }',
);

function oneRedisLocation({ url, cluster, sentinel }: RedisStoreConfig): boolean {
  return [url, cluster, sentinel].filter((where) => where !== undefined).length === 1;
}
