/**
 * `infergate/redis`: the stores and engines that keep gateway state in Redis, so several
 * processes share it. `ioredis` is an optional peer dependency, needed only by this entry.
 */
export { RedisTaskStore, type RedisTaskStoreOptions } from './tasks/redis-task-store.js';
export { RedisLimitEngine, type RedisLimitEngineOptions } from './policy/redis-limit-engine.js';
export { RedisResponseStore, type RedisResponseStoreOptions } from './state/redis-response-store.js';
export { RedisCacheStore, type RedisCacheStoreOptions } from './cache/redis-cache-store.js';
export { RedisUsageStore, type RedisUsageStoreOptions } from './state/redis-usage-store.js';
export { RedisHealthBus, type RedisHealthBusOptions } from './policy/redis-health-bus.js';
export type { RedisClient, RedisClusterOptions, RedisConnectionOptions, RedisSentinelOptions } from './redis/connection.js';
export { RedisKeyStore, type RedisKeyStoreOptions } from './admin/keys/redis-key-store.js';
export { RedisMcpSessionStore, type RedisMcpSessionStoreOptions } from './mcp/redis-session-store.js';
