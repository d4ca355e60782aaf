import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGateway } from '../../src/index.js';
import { createArkProvider } from '../../src/providers/ark/ark-provider.js';
import { createOpenAIProvider } from '../../src/providers/openai/openai-provider.js';
import { MemoryTaskStore } from '../../src/tasks/task-store.js';
import { startFakeArk, type FakeArk } from '../fakes/fake-ark.js';
import { FAKE_VIDEO, requestsTo, startFakeOpenAIMedia, type FakeOpenAIMedia } from '../fakes/fake-openai-media.js';
import { auth, bytesOf, jsonHeaders, KEY, mediaGateway, OTHER_KEY, served, waitFor } from './helpers.js';
import { nalTypes, videoTrack } from './mp4-boxes.js';

let openaiFake: FakeOpenAIMedia;
let arkFake: FakeArk;
let app: Awaited<ReturnType<typeof served>>;
let base: string;

beforeAll(async () => {
  openaiFake = await startFakeOpenAIMedia();
  arkFake = await startFakeArk();
  app = await served(mediaGateway({ openaiBaseURL: openaiFake.baseURL, arkBaseURL: arkFake.baseURL, speechBaseURL: arkFake.url }));
  base = app.server.url;
});

afterAll(async () => {
  await app.close();
  await openaiFake.close();
  await arkFake.close();
});

async function createTask(body: Record<string, unknown>, url = base) {
  const response = await fetch(`${url}/v1/video/generations`, { method: 'POST', headers: jsonHeaders, body: JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

async function readTask(id: string, key = KEY, url = base) {
  const response = await fetch(`${url}/v1/video/generations/${id}`, { headers: { authorization: `Bearer ${key}` } });
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

describe('video: the local model, end to end over HTTP', () => {
  it('queued → in_progress → completed, then a real MP4 with Range support', async () => {
    const created = await createTask({ model: 'local-video', prompt: 'a bouncing ball', seconds: 2, size: '160x96', metadata: { scene: 1 } });
    expect(created.status).toBe(200);
    const task = created.body;
    expect(task).toMatchObject({ object: 'video', model: 'local-video', status: 'queued', progress: 0, metadata: { scene: 1 } });
    expect(task.id).toMatch(/^video_[0-9a-f]{24}$/);
    expect(task.task_id).toBe(task.id);
    expect(task.created_at).toBeCloseTo(Date.now() / 1000, -1);
    expect(JSON.stringify(task)).not.toContain('local-video-');

    const early = await fetch(`${base}/v1/videos/${task.id}/content`, { headers: auth });
    expect(early.status).toBe(409);
    expect((await early.json()).error.code).toBe('video_not_ready');

    const seen: { status: string; progress: number }[] = [];
    const done = await waitFor(
      async () => {
        const { body } = await readTask(task.id);
        seen.push({ status: body.status, progress: body.progress });
        return body;
      },
      (body) => body.status === 'completed',
    );
    expect(seen.some((entry) => entry.status === 'in_progress' && entry.progress > 0 && entry.progress < 100)).toBe(true);
    const progress = seen.map((entry) => entry.progress);
    expect(progress).toEqual([...progress].sort((a, b) => a - b));
    for (const value of progress) expect(Number.isInteger(value)).toBe(true);
    expect(done).toMatchObject({ status: 'completed', progress: 100, completed_at: expect.any(Number) });

    const full = await fetch(`${base}/v1/videos/${task.id}/content`, { headers: auth });
    expect(full.status).toBe(200);
    expect(full.headers.get('content-type')).toBe('video/mp4');
    expect(full.headers.get('accept-ranges')).toBe('bytes');
    const mp4 = await bytesOf(full);
    expect(Number(full.headers.get('content-length'))).toBe(mp4.length);

    const track = videoTrack(mp4);
    expect(track.boxes).toEqual(['ftyp', 'moov', 'mdat']);
    expect(track).toMatchObject({ entryType: 'avc1', width: 160, height: 96, handler: 'vide', avcProfile: 66, timescale: 12, duration: 24 });
    expect(track.sizes).toHaveLength(24);
    expect(track.syncSamples).toEqual([1, 13]);
    expect(track.chunkOffset).toBe(track.mdat.start + 8);
    expect(track.sizes.reduce((sum, size) => sum + size, 0)).toBe(track.mdat.end - track.mdat.start - 8);
    const types = nalTypes(mp4, track.chunkOffset, track.sizes);
    expect(types[0]).toEqual([5]);
    expect(types[1]).toEqual([1]);
    expect(types[12]).toEqual([5]);

    const part = await fetch(`${base}/v1/videos/${task.id}/content`, { headers: { ...auth, range: 'bytes=100-1099' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 100-1099/${mp4.length}`);
    expect((await bytesOf(part)).equals(mp4.subarray(100, 1100))).toBe(true);
    const tail = await fetch(`${base}/v1/videos/${task.id}/content`, { headers: { ...auth, range: 'bytes=-10' } });
    expect(tail.status).toBe(206);
    expect((await bytesOf(tail)).equals(mp4.subarray(mp4.length - 10))).toBe(true);
    const outside = await fetch(`${base}/v1/videos/${task.id}/content`, { headers: { ...auth, range: `bytes=${mp4.length}-` } });
    expect(outside.status).toBe(416);
    expect(outside.headers.get('content-range')).toBe(`bytes */${mp4.length}`);
  });

  it('404 for an unknown id or a task of another key; 400 for what the local model cannot do', async () => {
    const { body: task } = await createTask({ model: 'local-video', prompt: 'x', seconds: 1 });
    expect((await readTask(task.id, OTHER_KEY)).status).toBe(404);
    expect((await fetch(`${base}/v1/videos/${task.id}/content`, { headers: { authorization: `Bearer ${OTHER_KEY}` } })).status).toBe(404);
    const unknown = await readTask('video_000000000000000000000000');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatchObject({ code: 'task_not_found', param: 'task_id' });
    expect((await createTask({ model: 'local-video', prompt: 'x', seconds: 60 })).body.error.param).toBe('seconds');
    expect((await createTask({ model: 'local-video', prompt: 'x', size: '1920x1080' })).body.error.param).toBe('size');
    expect((await createTask({ model: 'local-video', prompt: 'x', image: 'https://example.com/a.png' })).body.error.param).toBe('image');
    expect((await createTask({ model: 'local-video', prompt: 'x', duration: 0 })).body.error.param).toBe('duration');
    expect((await createTask({ model: 'local-image', prompt: 'x' })).body.error.param).toBe('model');
  });
});

describe('video: OpenAI Videos upstream', () => {
  it('maps the request, hides the upstream id, never goes backwards, streams the content with Range', async () => {
    openaiFake.videoStatuses = [
      { status: 'in_progress', progress: 30 },
      { status: 'in_progress', progress: 10 },
      { status: 'queued', progress: 0 },
      { status: 'completed', progress: 100, completed_at: 1_700_000_100 },
    ];
    const { body: task } = await createTask({
      model: 'sora',
      prompt: 'waves',
      seconds: '8',
      size: '1280x720',
      image: 'https://example.com/first.png',
      metadata: { quality: 'high' },
    });
    expect(task.status).toBe('queued');
    expect(JSON.stringify(task)).not.toContain('video_upstream_1');
    const [sent] = requestsTo(openaiFake, 'POST', '/v1/videos').slice(-1);
    expect(sent!.json).toEqual({
      quality: 'high',
      model: 'sora-2',
      prompt: 'waves',
      seconds: '8',
      size: '1280x720',
      input_reference: { image_url: 'https://example.com/first.png' },
    });
    expect(sent!.headers.authorization).toBe('Bearer sk-upstream-openai');

    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await readTask(task.id)).body);
    expect(statuses.map((entry) => [entry.status, entry.progress])).toEqual([
      ['in_progress', 30],
      ['in_progress', 30],
      ['in_progress', 30],
      ['completed', 100],
    ]);
    expect(statuses[3]!.completed_at).toBe(1_700_000_100);
    for (const entry of statuses) expect(JSON.stringify(entry)).not.toContain('video_upstream_1');

    const full = await fetch(`${base}/v1/videos/${task.id}/content`, { headers: auth });
    expect(full.status).toBe(200);
    expect((await bytesOf(full)).equals(FAKE_VIDEO)).toBe(true);
    const part = await fetch(`${base}/v1/videos/${task.id}/content`, { headers: { ...auth, range: 'bytes=1000-1999' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 1000-1999/${FAKE_VIDEO.length}`);
    expect((await bytesOf(part)).equals(FAKE_VIDEO.subarray(1000, 2000))).toBe(true);
    expect(requestsTo(openaiFake, 'GET', /\/content$/).at(-1)!.headers).toMatchObject({ range: 'bytes=1000-1999', authorization: 'Bearer sk-upstream-openai' });
  });

  it('a failed upstream task answers failed with its error', async () => {
    openaiFake.videoStatuses = [{ status: 'failed', progress: 40, error: { code: 'moderation_blocked', message: 'Blocked by moderation.' } }];
    const { body: task } = await createTask({ model: 'sora', prompt: 'x' });
    const { body } = await readTask(task.id);
    expect(body).toMatchObject({ status: 'failed', error: { code: 'moderation_blocked', message: 'Blocked by moderation.' } });
    expect(body).not.toHaveProperty('completed_at');
    expect((await fetch(`${base}/v1/videos/${task.id}/content`, { headers: auth })).status).toBe(409);
  });

  it('bounds metadata as OpenAI does, since the task keeps it for days: a 400 naming metadata past a bound', async () => {
    const within = Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`k${i}`.padEnd(64, 'x'), 'v'.repeat(512)]));
    const created = await createTask({ model: 'local-video', prompt: 'p', seconds: 1, metadata: within });
    expect(created.status).toBe(200);
    expect(created.body.metadata).toEqual(within);

    const over = [
      { ...within, one_more: 'v' },
      { ['k'.repeat(65)]: 'v' },
      { note: 'v'.repeat(513) },
      { content: Array.from({ length: 200 }, () => ({ type: 'image_url', image_url: { url: `https://example.com/${'i'.repeat(80)}.png` } })) },
      { nested: { deep: ['x'.repeat(400), 'y'.repeat(400)], more: Array.from({ length: 40 }, () => 'z'.repeat(500)) } },
      { note: { inside: 'n'.repeat(16 * 1024 * 1024) } },
    ];
    for (const metadata of over) {
      const { status, body } = await createTask({ model: 'local-video', prompt: 'p', seconds: 1, metadata });
      expect(status).toBe(400);
      expect(body.error).toMatchObject({ param: 'metadata', code: 'invalid_value' });
      expect(body.error.message).toContain('at most 16 keys of at most 64 characters, string values of at most 512 characters and 16 KiB of JSON');
    }
  });

  it('rejects what the Videos API cannot express', async () => {
    expect((await createTask({ model: 'sora', prompt: 'x', images: ['a', 'b'] })).body.error.param).toBe('images');
    expect((await createTask({ model: 'sora', prompt: 'x', metadata: { ratio: '16:9' } })).body.error.param).toBe('metadata.ratio');
  });
});

describe('video: upstream status answers out of the ordinary', () => {
  const call = { signal: new AbortController().signal, model: { id: 'video', provider: 'upstream', kind: 'video' as const } };

  it('a status the API does not define, even an Object key such as "constructor", is unknown', async () => {
    const openai = createOpenAIProvider({ baseURL: openaiFake.baseURL, apiKey: 'sk-upstream-openai' });
    const ark = createArkProvider({ baseURL: `${arkFake.url}/api/v3`, apiKey: 'ark-upstream-key' });
    try {
      for (const status of ['constructor', 'toString', '__proto__']) {
        openaiFake.videoStatuses = [{ status }];
        arkFake.taskStatuses = [status];
        expect(await openai.video!.get({ id: 'video_upstream_1' }, call)).toEqual({ status: 'unknown' });
        expect(await ark.video!.get({ id: 'cgt-20250101-abcd' }, call)).toMatchObject({ status: 'unknown' });
      }
    } finally {
      await openai.close?.();
      await ark.close?.();
    }
  });

  it('an upstream that sends headers and then stalls ends in a 504 after the idle limit: on create to the client, on a status read as the task it was', async () => {
    const openai = createOpenAIProvider({ baseURL: openaiFake.baseURL, apiKey: 'sk-upstream-openai' });
    try {
      openaiFake.stallNext = true;
      await expect(openai.video!.get({ id: 'video_upstream_1' }, { ...call, idleTimeoutMs: 100 })).rejects.toMatchObject({
        status: 504,
        code: 'upstream_timeout',
      });
    } finally {
      await openai.close?.();
    }

    const warnings: [string, Record<string, unknown> | undefined][] = [];
    const logger = { info() {}, error() {}, warn: (message: string, fields?: Record<string, unknown>) => void warnings.push([message, fields]) };
    const upstreams = { openaiBaseURL: openaiFake.baseURL, arkBaseURL: arkFake.baseURL, speechBaseURL: arkFake.url };
    const impatient = await served(mediaGateway(upstreams, { limits: { streamIdleTimeoutMs: 100 }, logger }));
    try {
      openaiFake.stallNext = true;
      expect(await createTask({ model: 'sora', prompt: 'x' }, impatient.server.url)).toMatchObject({
        status: 504,
        body: { error: { type: 'timeout_error', code: 'upstream_timeout' } },
      });

      openaiFake.videoStatuses = [{ status: 'in_progress', progress: 40 }];
      const { body: task } = await createTask({ model: 'sora', prompt: 'x' }, impatient.server.url);
      openaiFake.stallNext = true;
      expect((await readTask(task.id, KEY, impatient.server.url)).body).toMatchObject({ status: 'queued', progress: 0 });
      expect(warnings).toContainEqual(['video task refresh failed', { taskId: task.id, message: 'The upstream did not answer in time.' }]);
      expect((await readTask(task.id, KEY, impatient.server.url)).body).toMatchObject({ status: 'in_progress', progress: 40 });
    } finally {
      await impatient.close();
    }
  });
});

describe('video: Seedance on Ark', () => {
  it('maps the request onto content and the Seedance fields, and downloads from the result URL without credentials', async () => {
    arkFake.taskStatuses = ['queued', 'running', 'succeeded'];
    const { body: task } = await createTask({
      model: 'seedance',
      prompt: 'a cat yawning',
      duration: 5,
      image: 'https://example.com/first.png',
      images: ['https://example.com/ref1.png'],
      metadata: {
        resolution: '720p',
        ratio: '16:9',
        generate_audio: true,
        watermark: false,
        service_tier: 'flex',
        seed: 7,
        content: [{ type: 'image_url', image_url: { url: 'https://example.com/last.png' }, role: 'last_frame' }],
      },
    });
    expect(task.status).toBe('queued');
    const [sent] = requestsTo(arkFake, 'POST', '/api/v3/contents/generations/tasks').slice(-1);
    expect(sent!.json).toEqual({
      model: 'doubao-seedance-1-0-pro-250528',
      content: [
        { type: 'text', text: 'a cat yawning' },
        { type: 'image_url', image_url: { url: 'https://example.com/first.png' }, role: 'first_frame' },
        { type: 'image_url', image_url: { url: 'https://example.com/ref1.png' }, role: 'reference_image' },
        { type: 'image_url', image_url: { url: 'https://example.com/last.png' }, role: 'last_frame' },
      ],
      resolution: '720p',
      ratio: '16:9',
      generate_audio: true,
      watermark: false,
      service_tier: 'flex',
      seed: 7,
      duration: 5,
    });
    expect(JSON.stringify(task)).not.toContain('cgt-');

    const first = (await readTask(task.id)).body;
    expect(first).toMatchObject({ status: 'queued', progress: 0 });
    const second = (await readTask(task.id)).body;
    expect(second.status).toBe('in_progress');
    expect(second.progress).toBeGreaterThan(0);
    expect(second.progress).toBeLessThan(100);
    const third = (await readTask(task.id)).body;
    expect(third).toMatchObject({ status: 'completed', progress: 100, completed_at: expect.any(Number) });

    const part = await fetch(`${base}/v1/videos/${task.id}/content`, { headers: { ...auth, range: 'bytes=0-9' } });
    expect(part.status).toBe(206);
    expect((await bytesOf(part)).equals(FAKE_VIDEO.subarray(0, 10))).toBe(true);
    const cdn = requestsTo(arkFake, 'GET', '/cdn/video.mp4').at(-1)!;
    expect(cdn.url).toBe('/cdn/video.mp4?X-Signature=abc');
    expect(cdn.headers.range).toBe('bytes=0-9');
    expect(cdn.headers.authorization).toBeUndefined();
  });

  it('size maps to ratio and resolution; cancelled and failed tasks fail', async () => {
    arkFake.taskStatuses = ['failed'];
    const { body: task } = await createTask({ model: 'seedance', prompt: 'x', size: '1280x720', seconds: '10' });
    expect(requestsTo(arkFake, 'POST', '/api/v3/contents/generations/tasks').at(-1)!.json).toMatchObject({ ratio: '16:9', resolution: '720p', duration: 10 });
    expect((await readTask(task.id)).body).toMatchObject({ status: 'failed', error: { code: 'OutputVideoSensitiveContentDetected' } });
    expect((await createTask({ model: 'seedance', prompt: 'x', size: '1000x700' })).body.error.param).toBe('size');
  });
});

describe('video: refresh throttle and background poller', () => {
  it('asks the upstream at most once per interval per task', async () => {
    const throttled = await served(
      mediaGateway({ openaiBaseURL: openaiFake.baseURL, arkBaseURL: arkFake.baseURL, speechBaseURL: arkFake.url }, { videoRefreshIntervalMs: 300 }),
    );
    try {
      openaiFake.videoStatuses = [{ status: 'in_progress', progress: 50 }];
      const { body: task } = await createTask({ model: 'sora', prompt: 'x' }, throttled.server.url);
      const polls = () => requestsTo(openaiFake, 'GET', '/v1/videos/video_upstream_1').length;
      const before = polls();
      await Promise.all([readTask(task.id, KEY, throttled.server.url), readTask(task.id, KEY, throttled.server.url)]);
      expect(polls()).toBe(before);
      await sleep(350);
      await Promise.all([
        readTask(task.id, KEY, throttled.server.url),
        readTask(task.id, KEY, throttled.server.url),
        readTask(task.id, KEY, throttled.server.url),
      ]);
      expect(polls()).toBe(before + 1);
      expect((await readTask(task.id, KEY, throttled.server.url)).body).toMatchObject({ status: 'in_progress', progress: 50 });
    } finally {
      await throttled.close();
    }
  });

  it('the poller advances tasks nobody reads; dispose stops it', async () => {
    const store = new MemoryTaskStore();
    const gateway = mediaGateway(undefined, { taskStore: store, videoPoller: { intervalMs: 50, batchSize: 5 } });
    const response = await gateway.fetch('http://gateway/v1/video/generations', {
      method: 'POST',
      headers: jsonHeaders,
      body: JSON.stringify({ model: 'local-video', prompt: 'x', seconds: 1 }),
    });
    const { id } = (await response.json()) as { id: string };
    const done = await waitFor(
      () => store.get(id),
      (task) => task?.status === 'completed',
      5000,
    );
    expect(done).toMatchObject({ status: 'completed', progress: 100 });
    expect(await store.pending(10)).toEqual([]);
    await gateway.dispose();
  });

  it('answers 501 for a video model whose provider has no video calls', async () => {
    const gateway = createGateway({
      keys: [{ key: KEY }],
      providers: { bare: { type: 'bare' } },
      models: [{ id: 'v', provider: 'bare', kind: 'video' }],
      logger: false,
    });
    const response = await gateway.fetch('http://gateway/v1/video/generations', {
      method: 'POST',
      headers: jsonHeaders,
      body: JSON.stringify({ model: 'v', prompt: 'x' }),
    });
    expect(response.status).toBe(501);
  });
});
