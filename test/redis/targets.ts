import { Cluster, Redis } from 'ioredis';
import type { RedisClient } from '../../src/redis/connection.js';
import { startRedis } from '../media/helpers.js';

/** How a store reaches a target: spread into its options (`{ url }` or `{ cluster: { nodes } }`). */
export type TargetConnection = { url: string } | { cluster: { nodes: string[] } };

/** One Redis deployment the Redis-backed suites run on. */
export interface RedisTarget {
  name: 'single node' | 'cluster';
  connection: TargetConnection;
  /** The same kind of connection to a port where nothing listens. */
  unreachable(port: number): TargetConnection;
  /** A new raw client for checks on the keys (closed by `close`). */
  client(): RedisClient;
  /** The keys matching `pattern`, from every primary. */
  keys(pattern: string): Promise<string[]>;
  /** Deletes the keys under `prefix` (when given), closes the clients, stops a Redis started here. */
  close(prefix?: string): Promise<void>;
}

/**
 * The Redis deployments to run on: the single node (`REDIS_URL`, or a `redis-server` started
 * here) and a Redis Cluster from the seed list in `REDIS_CLUSTER_NODES` (`host:port,…`;
 * `.ci/run` starts a 3-primary one). In CI a missing cluster fails the suite; locally it is
 * announced and the suites run on the single node only. `REDIS_CLUSTER_NODES=none` leaves the
 * cluster out on purpose (`.ci/shifted-clock`, whose Redis runs on a shifted clock).
 */
export async function redisTargets(): Promise<RedisTarget[]> {
  const targets: RedisTarget[] = [];
  const single = await startRedis();
  if (single) {
    const url = (port: number) => ({ url: `redis://127.0.0.1:${port}` });
    targets.push(target('single node', { url: single.url }, url, () => new Redis(single.url), single.stop));
  }
  const nodes = clusterNodes();
  if (nodes) {
    const cluster = (port: number) => ({ cluster: { nodes: [`127.0.0.1:${port}`] } });
    targets.push(
      target(
        'cluster',
        { cluster: { nodes } },
        cluster,
        () => new Cluster(nodes),
        async () => {},
      ),
    );
  }
  return targets;
}

function clusterNodes(): string[] | undefined {
  const list = process.env.REDIS_CLUSTER_NODES;
  if (list === 'none') return undefined;
  if (list) return list.split(',').map((node) => node.trim());
  const reason = 'REDIS_CLUSTER_NODES is not set (a Redis Cluster seed list, host:port,…; .ci/run starts one, or run .ci/redis-cluster)';
  if (process.env.CI) throw new Error(`The Redis suites run on a Redis Cluster too in CI: ${reason}`);
  console.warn(`\n!!! [redis tests] NOT running on a Redis Cluster: ${reason}. Only the single node is covered.\n`);
  return undefined;
}

function target(
  name: RedisTarget['name'],
  connection: TargetConnection,
  unreachable: RedisTarget['unreachable'],
  open: () => RedisClient,
  stop: () => Promise<void>,
): RedisTarget {
  const opened: RedisClient[] = [];
  const client = () => {
    const redis = open();
    opened.push(redis);
    return redis;
  };
  const keys = async (pattern: string) => {
    const redis = client();
    const primaries = redis instanceof Cluster ? await readyNodes(redis) : [redis];
    return (await Promise.all(primaries.map((node) => node.keys(pattern)))).flat();
  };
  return {
    name,
    connection,
    unreachable,
    client,
    keys,
    async close(prefix) {
      if (prefix) {
        const redis = client();
        // One DEL per key: on a cluster the keys are in different slots.
        await Promise.all((await keys(`${prefix}*`)).map((key) => redis.del(key)));
      }
      for (const redis of opened) redis.disconnect();
      await stop();
    },
  };
}

/** A cluster's primaries, once it has loaded its slot map. */
async function readyNodes(cluster: Cluster): Promise<Redis[]> {
  if (cluster.status !== 'ready') await new Promise((resolve) => cluster.once('ready', resolve));
  return cluster.nodes('master');
}
