import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisTaskStore } from '../../src/tasks/redis-task-store.js';
import { MemoryTaskStore, type TaskStore, type VideoTaskRecord } from '../../src/tasks/task-store.js';
import { redisTargets } from '../redis/targets.js';
import { bytesOf, jsonHeaders, KEY, mediaGateway, waitFor } from './helpers.js';
import { videoTrack } from './mp4-boxes.js';

function task(id: string, fields: Partial<VideoTaskRecord> = {}): VideoTaskRecord {
  return {
    id,
    keyId: 'key_a',
    model: 'local-video',
    provider: 'local',
    upstreamId: `up-${id}`,
    status: 'queued',
    progress: 0,
    createdAt: 1_700_000_000,
    revision: 0,
    ...fields,
  };
}

/** The same suite for every store. */
function storeSuite(name: string, open: () => Promise<TaskStore>) {
  describe(`TaskStore: ${name}`, () => {
    let store: TaskStore;
    beforeAll(async () => {
      store = await open();
    });
    afterAll(async () => {
      await store.close?.();
    });
    const unique = () => `video_${randomBytes(6).toString('hex')}`;

    it('stores and returns a copy; unknown ids are undefined; an id is created once', async () => {
      const id = unique();
      const record = task(id, { metadata: { a: [1, 2] }, upstreamState: { url: 'x' } });
      await store.create(record);
      record.progress = 99;
      expect(await store.get(id)).toEqual(task(id, { metadata: { a: [1, 2] }, upstreamState: { url: 'x' } }));
      expect(await store.get(unique())).toBeUndefined();
      await expect(store.create(task(id))).rejects.toThrow();
    });

    it('updates compare-and-set on the revision', async () => {
      const id = unique();
      await store.create(task(id));
      expect(await store.update(task(id, { status: 'in_progress', progress: 10, revision: 1 }))).toBe(true);
      // A writer that read revision 0 too is refused.
      expect(await store.update(task(id, { status: 'queued', progress: 5, revision: 1 }))).toBe(false);
      expect(await store.update(task(id, { progress: 20, revision: 3 }))).toBe(false);
      expect(await store.get(id)).toMatchObject({ status: 'in_progress', progress: 10, revision: 1 });
      expect(await store.update(task(unique(), { revision: 1 }))).toBe(false);
    });

    it('lets exactly one of two concurrent writers of the same revision win', async () => {
      const id = unique();
      await store.create(task(id));
      const results = await Promise.all([store.update(task(id, { progress: 1, revision: 1 })), store.update(task(id, { progress: 2, revision: 1 }))]);
      expect(results.filter(Boolean)).toHaveLength(1);
    });

    it('lists unfinished tasks oldest first, up to the limit; final ones leave the list', async () => {
      const fresh = name === 'memory' ? store : await open();
      try {
        const ids = [unique(), unique(), unique()];
        for (const [index, id] of ids.entries()) await fresh.create(task(id, { createdAt: Math.floor(Date.now() / 1000) - 100 + index }));
        const pending = await fresh.pending(1000);
        expect(pending.filter((id) => ids.includes(id))).toEqual(ids);
        expect(await fresh.pending(1)).toHaveLength(1);
        expect(await fresh.update(task(ids[0]!, { status: 'completed', progress: 100, revision: 1 }))).toBe(true);
        expect(await fresh.update(task(ids[1]!, { status: 'failed', revision: 1 }))).toBe(true);
        expect((await fresh.pending(1000)).filter((id) => ids.includes(id))).toEqual([ids[2]]);
      } finally {
        if (fresh !== store) await fresh.close?.();
      }
    });
  });
}

storeSuite('memory', async () => new MemoryTaskStore());

describe('MemoryTaskStore bounds', () => {
  it('keeps at most maxTasks, dropping the oldest first', async () => {
    const store = new MemoryTaskStore({ maxTasks: 3 });
    for (const id of ['a', 'b', 'c', 'd']) await store.create(task(id));
    expect(await store.get('a')).toBeUndefined();
    expect((await store.get('d'))?.id).toBe('d');
    expect(await store.pending(10)).toEqual(['b', 'c', 'd']);
  });

  it('keeps at most maxBytes of tasks (their JSON), dropping the oldest first, whatever a task holds', async () => {
    const size = Buffer.byteLength(JSON.stringify(task('a', { metadata: { note: 'n'.repeat(500) } })));
    const store = new MemoryTaskStore({ maxBytes: size * 3 });
    for (const id of ['a', 'b', 'c', 'd']) await store.create(task(id, { metadata: { note: 'n'.repeat(500) } }));
    expect(await store.get('a')).toBeUndefined();
    expect(await store.pending(10)).toEqual(['b', 'c', 'd']);
    // A rewrite that grows a task makes room by dropping the oldest, never the task written.
    const grown = { ...(await store.get('d'))!, revision: 1, upstreamState: { cursor: 'c'.repeat(size) } };
    expect(await store.update(grown)).toBe(true);
    expect(await store.get('b')).toBeUndefined();
    expect((await store.get('d'))?.upstreamState).toEqual({ cursor: 'c'.repeat(size) });
    await expect(store.create(task('huge', { upstreamState: { blob: 'x'.repeat(size * 3) } }))).rejects.toThrow(/larger than maxBytes/);
    expect(() => new MemoryTaskStore({ maxBytes: 0 })).toThrow(/maxBytes must be a positive integer/);
  });

  it('forgets a task ttlMs after its last write, like the Redis store', async () => {
    const store = new MemoryTaskStore({ ttlMs: 50 });
    await store.create(task('old'));
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(await store.get('old')).toBeUndefined();
    await store.create(task('new'));
    expect(await store.pending(10)).toEqual(['new']);
  });
});

const targets = await redisTargets();
const prefix = `infergate-test-${randomBytes(4).toString('hex')}:`;

describe.each(targets)('Redis ($name)', (target) => {
  const { connection } = target;
  afterAll(() => target.close(prefix));

  storeSuite(`redis ${target.name}`, async () => new RedisTaskStore({ ...connection, keyPrefix: prefix }));

  it('spreads tasks over 16 hash tags, each task with the list that holds it; pending merges them oldest first', async () => {
    const own = `${prefix}spread-${randomBytes(4).toString('hex')}:`;
    const store = new RedisTaskStore({ ...connection, keyPrefix: own });
    try {
      const ids = Array.from({ length: 40 }, (_, index) => `video_${index}`);
      const base = Math.floor(Date.now() / 1000) - 1000;
      // Created newest first, so the creation order is not the order of creation times.
      for (const [index, id] of [...ids.entries()].reverse()) await store.create(task(id, { createdAt: base + index }));
      const keys = await target.keys(`${own}*`);
      const tags = new Set(keys.map((key) => /^[^{]*\{(tasks:\d+)\}:/.exec(key)?.[1]));
      expect(tags.size).toBeGreaterThan(8);
      expect([...tags].every((tag) => tag && /^tasks:(\d|1[0-5])$/.test(tag))).toBe(true);
      for (const id of ids) {
        const [taskKey] = keys.filter((key) => key.endsWith(`}:task:${id}`));
        const pendingKey = taskKey!.replace(`:task:${id}`, ':pending');
        expect(await target.client().zscore(pendingKey, id)).not.toBeNull();
      }
      expect(await store.pending(5)).toEqual(ids.slice(0, 5));
      expect(await store.pending(100)).toEqual(ids);
    } finally {
      await store.close();
    }
  });

  it('reads, lists and updates a task the earlier layout wrote under the single {tasks} tag', async () => {
    const own = `${prefix}legacy-${randomBytes(4).toString('hex')}:`;
    const store = new RedisTaskStore({ ...connection, keyPrefix: own });
    try {
      const now = Math.floor(Date.now() / 1000);
      const old = task('video_old', { createdAt: now - 100 });
      const raw = target.client();
      await raw.hset(`${own}{tasks}:task:video_old`, 'rev', '0', 'json', JSON.stringify(old));
      await raw.zadd(`${own}{tasks}:pending`, String(old.createdAt), 'video_old');
      await store.create(task('video_new', { createdAt: now - 50 }));
      expect(await store.get('video_old')).toEqual(old);
      expect(await store.pending(10)).toEqual(['video_old', 'video_new']);
      expect(await store.update({ ...old, status: 'completed', progress: 100, revision: 1 })).toBe(true);
      expect(await store.get('video_old')).toMatchObject({ status: 'completed', revision: 1 });
      expect(await store.pending(10)).toEqual(['video_new']);
      expect(await store.update({ ...old, revision: 1 })).toBe(false);
    } finally {
      await store.close();
    }
  });

  it('two gateways sharing one Redis see the same task; a new instance still serves it', async () => {
    const stores = [0, 1, 2].map(() => new RedisTaskStore({ ...connection, keyPrefix: prefix }));
    const [a, b, c] = stores.map((store) => mediaGateway(undefined, { taskStore: store }));
    try {
      const created = await a!.fetch('http://a/v1/video/generations', {
        method: 'POST',
        headers: jsonHeaders,
        body: JSON.stringify({ model: 'local-video', prompt: 'shared', seconds: 1 }),
      });
      const { id } = (await created.json()) as { id: string };
      const read = async (gateway: typeof a) =>
        (await (await gateway!.fetch(`http://x/v1/video/generations/${id}`, { headers: { authorization: `Bearer ${KEY}` } })).json()) as Record<
          string,
          unknown
        >;
      expect(await read(b)).toMatchObject({ id, status: expect.stringMatching(/queued|in_progress|completed/) });
      const done = await waitFor(
        () => read(b),
        (body) => body.status === 'completed',
      );
      expect(done).toMatchObject({ id, progress: 100 });
      // A fresh instance (a restart) finds the finished task and serves its content.
      expect(await read(c)).toEqual(done);
      const content = await c!.fetch(`http://x/v1/videos/${id}/content`, { headers: { authorization: `Bearer ${KEY}` } });
      expect(content.status).toBe(200);
      expect(videoTrack(await bytesOf(content)).entryType).toBe('avc1');
    } finally {
      for (const gateway of [a, b, c]) await gateway!.dispose();
      for (const store of stores) await store.close();
    }
  });

  it('two gateway processes (the CLI) share tasks through Redis, and a restarted process serves them', async () => {
    const root = fileURLToPath(new URL('../..', import.meta.url));
    const dir = mkdtempSync(join(tmpdir(), 'infergate-redis-cli-'));
    const config = join(dir, 'config.json');
    writeFileSync(
      config,
      JSON.stringify({
        keys: [{ key: KEY }],
        providers: { local: { type: 'local', videoRenderMs: 300 } },
        taskStore: { type: 'redis', ...connection, keyPrefix: prefix },
        videoRefreshIntervalMs: 0,
      }),
    );
    const children: ChildProcess[] = [];
    const start = async (): Promise<{ url: string; child: ChildProcess }> => {
      const child = spawn(process.execPath, [join(root, 'dist/cli.js'), '--config', config, '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
      children.push(child);
      let output = '';
      const url = await new Promise<string>((resolve, reject) => {
        child.stdout!.on('data', (chunk: Buffer) => {
          output += chunk.toString();
          const match = /listening on (\S+)/.exec(output);
          if (match) resolve(match[1]!);
        });
        child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
        child.once('exit', (code) => reject(new Error(`cli exited with ${code}: ${output}`)));
      });
      return { url, child };
    };
    const stop = (child: ChildProcess) =>
      new Promise((resolve) => {
        child.once('exit', resolve);
        child.kill('SIGTERM');
      });
    try {
      const [first, second] = await Promise.all([start(), start()]);
      const created = await http('POST', `${first.url}/v1/video/generations`, JSON.stringify({ model: 'local-video', prompt: 'across processes', seconds: 1 }));
      expect(created.status).toBe(200);
      const { id } = JSON.parse(created.body.toString()) as { id: string };
      const read = async (url: string) => JSON.parse((await http('GET', `${url}/v1/video/generations/${id}`)).body.toString()) as Record<string, unknown>;
      expect((await read(second.url)).id).toBe(id);
      await waitFor(
        () => read(second.url),
        (body) => body.status === 'completed',
      );
      await stop(first.child);
      const restarted = await start();
      expect(await read(restarted.url)).toMatchObject({ id, status: 'completed', progress: 100 });
      const content = await http('GET', `${restarted.url}/v1/videos/${id}/content`);
      expect(content.status).toBe(200);
      expect(videoTrack(content.body).entryType).toBe('avc1');
    } finally {
      await Promise.all(children.filter((child) => child.exitCode === null && child.signalCode === null).map(stop));
    }
  });
});

/** A plain node:http call (the spawned servers are reached like any HTTP client would). */
function http(method: string, url: string, body?: string): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      url,
      { method, headers: { authorization: `Bearer ${KEY}`, ...(body ? { 'content-type': 'application/json' } : {}) } },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks) }));
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}
