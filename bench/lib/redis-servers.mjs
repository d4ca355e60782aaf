// The Redis the scale-out bench runs on: the one it is given (`--redis URL`, `--cluster seed,list`)
// or a throwaway one it starts (`redis-server`, `.ci/redis-cluster`) and stops after the run;
// the pids of its server processes (for their CPU time), and the removal of the run's keys.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './free-port.mjs';
import { Cluster, Redis } from 'ioredis';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * @typedef {object} RedisTopology
 * @property {'single' | 'cluster'} name
 * @property {string[]} gatewayArgs  how a gateway process is told where it is
 * @property {string} where          for the report: the URL or the seed list
 * @property {boolean} throwaway     started by this run
 * @property {() => import('ioredis').Redis | import('ioredis').Cluster} connect
 * @property {() => void} stop       stops a throwaway server (nothing for a given one)
 */

/** Stops for the throwaway servers still running when the runner exits (even by its watchdog). */
const stops = new Set();
process.on('exit', () => {
  for (const stop of stops) stop();
});

/** @param {() => void} stop */
function registerStop(stop) {
  let stopped = false;
  const once = () => {
    if (stopped) return;
    stopped = true;
    stops.delete(once);
    stop();
  };
  stops.add(once);
  return once;
}

/** One Redis server: the URL given, or a throwaway `redis-server` (no persistence) on a free port. @param {string | undefined} url */
export async function singleNode(url) {
  let stop = () => {};
  const throwaway = !url;
  if (!url) {
    const dir = mkdtempSync(join(os.tmpdir(), 'infergate-scale-out-redis-'));
    const port = await freePort();
    const pidfile = join(dir, 'redis.pid');
    execFileSync('redis-server', [
      ...['--bind', '127.0.0.1', '--port', String(port), '--save', '', '--appendonly', 'no'],
      ...['--dir', dir, '--daemonize', 'yes', '--pidfile', pidfile, '--logfile', join(dir, 'redis.log')],
    ]);
    await waitFor(() => new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0 }));
    url = `redis://127.0.0.1:${port}`;
    stop = registerStop(() => {
      try {
        process.kill(Number(readFileSync(pidfile, 'utf8')), 'SIGTERM');
      } catch {}
      rmSync(dir, { recursive: true, force: true });
    });
  }
  const given = url;
  /** @type {RedisTopology} */
  const topology = {
    name: 'single',
    gatewayArgs: ['--redis', given],
    where: given,
    throwaway,
    connect: () => new Redis(given, { maxRetriesPerRequest: 1 }),
    stop,
  };
  return topology;
}

/** A Redis Cluster: the seed list given, or a throwaway 3-master one (`.ci/redis-cluster`). @param {string | undefined} seeds */
export async function cluster(seeds) {
  let stop = () => {};
  const throwaway = !seeds;
  if (!seeds) {
    const dir = join(os.tmpdir(), `infergate-scale-out-cluster-${process.pid}`);
    const ports = [await freePort(), await freePort(), await freePort()].map(String);
    seeds = execFileSync(join(root, '.ci/redis-cluster'), ['start', dir, ...ports], { encoding: 'utf8' }).trim();
    stop = registerStop(() => {
      execFileSync(join(root, '.ci/redis-cluster'), ['stop', dir], { stdio: 'ignore' });
    });
  }
  const nodes = seeds.split(',').filter(Boolean);
  const hostPorts = nodes.map((node) => {
    const { hostname, port } = new URL(node.includes('://') ? node : `redis://${node}`);
    return { host: hostname, port: Number(port || 6379) };
  });
  /** @type {RedisTopology} */
  const topology = {
    name: 'cluster',
    gatewayArgs: ['--cluster', nodes.join(',')],
    where: nodes.join(','),
    throwaway,
    connect: () => new Cluster(hostPorts, { redisOptions: { maxRetriesPerRequest: 1 } }),
    stop,
  };
  return topology;
}

/** Waits until a server answers PING (5 s at most). @param {() => Redis} open */
async function waitFor(open) {
  const deadline = Date.now() + 5000;
  for (;;) {
    const redis = open();
    try {
      await redis.connect();
      await redis.ping();
      redis.disconnect();
      return;
    } catch (error) {
      redis.disconnect();
      if (Date.now() > deadline) throw error;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** The servers a client talks to: itself, or a cluster's masters. @param {Redis | Cluster} redis */
function serversOf(redis) {
  return redis instanceof Cluster ? redis.nodes('master') : [redis];
}

/**
 * The process ids of the topology's servers (`INFO server`), for their CPU time; the bench runs
 * on loopback, so they are processes of this machine.
 * @param {RedisTopology} topology
 */
export async function serverPids(topology) {
  const redis = topology.connect();
  try {
    if (redis instanceof Cluster) await new Promise((r) => redis.once('ready', r));
    const infos = await Promise.all(serversOf(redis).map((server) => server.info('server')));
    return infos.map((info) => Number(/process_id:(\d+)/.exec(info)?.[1]));
  } finally {
    redis.disconnect();
  }
}

/**
 * Deletes every key under a prefix (the run's own: nothing else is touched), on every master.
 * @param {RedisTopology} topology @param {string} prefix
 */
export async function deleteKeys(topology, prefix) {
  const redis = topology.connect();
  let deleted = 0;
  try {
    if (redis instanceof Cluster) await new Promise((r) => redis.once('ready', r));
    for (const server of serversOf(redis)) {
      let cursor = '0';
      do {
        const [next, keys] = await server.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
        cursor = next;
        // One DEL per key: on a cluster, keys of one scan reply may be on different slots.
        for (const key of keys) deleted += await server.del(key);
      } while (cursor !== '0');
    }
  } finally {
    redis.disconnect();
  }
  return deleted;
}
