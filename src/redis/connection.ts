import { Cluster, Redis, type RedisOptions } from 'ioredis';

/** What the stores talk to: one Redis (single node or through Sentinel) or a Redis Cluster. */
export type RedisClient = Redis | Cluster;

/** A Redis Cluster, found from a few of its nodes (ioredis `Cluster`). */
export interface RedisClusterOptions {
  /** Seed nodes, `host:port` each (`redis://host:port` too); the client discovers the others. */
  nodes: string[];
  username?: string | undefined;
  password?: string | undefined;
  /** Connect to the nodes over TLS. */
  tls?: boolean | undefined;
}

/** A Redis whose primary Sentinel names (ioredis's `sentinels` and `name`); it follows failovers. */
export interface RedisSentinelOptions {
  /** The Sentinels, `host:port` each. */
  sentinels: string[];
  /** The primary's group name, as in `sentinel monitor <name> …`. */
  name: string;
  /** Credentials of the Redis servers… */
  username?: string | undefined;
  password?: string | undefined;
  /** …and of the Sentinels, when they need their own. */
  sentinelUsername?: string | undefined;
  sentinelPassword?: string | undefined;
  /** Database number. Default 0. */
  db?: number | undefined;
  /** Connect to the Redis servers and the Sentinels over TLS. */
  tls?: boolean | undefined;
}

/** Where a store's Redis is: exactly one of the four. */
export interface RedisConnectionOptions {
  /**
   * A connected ioredis client or cluster to use (the store does not close it; give it
   * `enableOfflineQueue: false` so that calls fail at once while Redis is down), or…
   */
  client?: RedisClient | undefined;
  /** …a Redis URL (`redis://host:6379/0`, `rediss://` for TLS), or… */
  url?: string | undefined;
  /** …a Redis Cluster's seed nodes, or… */
  cluster?: RedisClusterOptions | undefined;
  /** …Sentinels and the name of the primary they watch. The store opens and closes its own connection for these three. */
  sentinel?: RedisSentinelOptions | undefined;
}

/** Per-connection settings a store chooses (timeouts, retries, offline queue). */
export type RedisTuning = Pick<RedisOptions, 'connectTimeout' | 'commandTimeout' | 'maxRetriesPerRequest' | 'enableOfflineQueue'>;

/** The client the options name: the one given (not owned), or a new one the caller must close. */
export function openRedis(options: RedisConnectionOptions, owner: string, tuning: RedisTuning): { redis: RedisClient; owned: boolean } {
  const given = (['client', 'url', 'cluster', 'sentinel'] as const).filter((name) => options[name] !== undefined);
  if (given.length !== 1) {
    const problem = given.length === 0 ? 'pass' : `pass only one of ${given.map((name) => `\`${name}\``).join(', ')}:`;
    throw new TypeError(`${owner}: ${problem} \`client\` (an ioredis client or cluster), \`url\`, \`cluster\` or \`sentinel\``);
  }
  if (options.client) return { redis: options.client, owned: false };
  if (options.url) return { redis: new Redis(options.url, tuning), owned: true };
  if (options.cluster) return { redis: openCluster(options.cluster, owner, tuning), owned: true };
  return { redis: openSentinel(options.sentinel!, owner, tuning), owned: true };
}

function openCluster(cluster: RedisClusterOptions, owner: string, tuning: RedisTuning): Cluster {
  if (!Array.isArray(cluster.nodes) || cluster.nodes.length === 0) throw new TypeError(`${owner}: cluster.nodes must list at least one host:port`);
  const { enableOfflineQueue, ...perNode } = tuning;
  return new Cluster(
    cluster.nodes.map((node) => hostAndPort(node, 6379, `${owner}: cluster.nodes`)),
    {
      enableOfflineQueue,
      redisOptions: { ...perNode, username: cluster.username, password: cluster.password, ...(cluster.tls ? { tls: {} } : {}) },
    },
  );
}

function openSentinel(sentinel: RedisSentinelOptions, owner: string, tuning: RedisTuning): Redis {
  if (!Array.isArray(sentinel.sentinels) || sentinel.sentinels.length === 0)
    throw new TypeError(`${owner}: sentinel.sentinels must list at least one host:port`);
  if (typeof sentinel.name !== 'string' || sentinel.name === '')
    throw new TypeError(`${owner}: sentinel.name must name the primary (as in \`sentinel monitor <name>\`)`);
  return new Redis({
    ...tuning,
    sentinels: sentinel.sentinels.map((address) => hostAndPort(address, 26379, `${owner}: sentinel.sentinels`)),
    name: sentinel.name,
    username: sentinel.username,
    password: sentinel.password,
    sentinelUsername: sentinel.sentinelUsername,
    sentinelPassword: sentinel.sentinelPassword,
    db: sentinel.db ?? 0,
    ...(sentinel.tls ? { tls: {}, enableTLSForSentinelMode: true, sentinelTLS: {} } : {}),
  });
}

/** `host:port`, `[v6]:port` or `redis://host:port` as ioredis's `{ host, port }`. */
function hostAndPort(address: string, defaultPort: number, field: string): { host: string; port: number } {
  let url: URL | undefined;
  try {
    url = new URL(address.includes('://') ? address : `redis://${address}`);
  } catch {}
  if (!url?.hostname) throw new TypeError(`${field}: ${JSON.stringify(address)} is not host:port`);
  return { host: url.hostname.replace(/^\[(.*)\]$/, '$1'), port: url.port ? Number(url.port) : defaultPort };
}
