import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGateway, type Gateway } from '../../src/gateway.js';
import type { UsageEvent } from '../../src/policy/events.js';
import { createLocalProvider } from '../../src/providers/local/local-provider.js';
import { withinOneMinute } from '../helpers/rate-window.js';

/** Media requests are billed and observed like text: one usage event each, with their units. */
let gateway: Gateway;
const usage: UsageEvent[] = [];
const post = (path: string, body: unknown, key = 'sk-test') =>
  gateway.fetch(`http://gateway${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

beforeAll(() => {
  gateway = createGateway({
    keys: [
      { key: 'sk-test', id: 'team-a' },
      { key: 'sk-one', id: 'one-request', limits: { requestsPerMinute: 1 } },
    ],
    providers: { local: createLocalProvider({ chunkDelayMs: 0, videoRenderMs: 0 }) },
    logger: false,
    hooks: { onUsage: (event) => void usage.push(event) },
  });
});
afterAll(() => gateway.dispose());

describe('usage events for media', () => {
  it('an image generation reports the images made', async () => {
    usage.length = 0;
    const response = await post('/v1/images/generations', { model: 'local-image', prompt: 'a red square', n: 2, size: '256x256' });
    expect(response.status).toBe(200);
    await response.arrayBuffer();
    await expect.poll(() => usage.length).toBe(1);
    expect(usage[0]).toMatchObject({
      kind: 'image',
      endpoint: '/v1/images/generations',
      model: 'local-image',
      keyId: 'team-a',
      status: 'ok',
      units: { images: 2 },
      attempts: 1,
    });
  });

  it('a streamed image generation reports once the stream ended, with its time to first byte', async () => {
    usage.length = 0;
    const response = await post('/v1/images/generations', { model: 'local-image', prompt: 'a red square', stream: true, partial_images: 1, size: '256x256' });
    await response.text();
    await expect.poll(() => usage.length).toBe(1);
    expect(usage[0]).toMatchObject({ kind: 'image', stream: true, status: 'ok', units: { images: 1 }, ttftMs: expect.any(Number) });
  });

  it('speech reports the characters spoken once the audio was sent', async () => {
    usage.length = 0;
    const response = await post('/v1/audio/speech', { model: 'local-speech', input: 'Hello there.', voice: 'en_female_anna_v1', response_format: 'wav' });
    expect(response.status).toBe(200);
    await response.arrayBuffer();
    await expect.poll(() => usage.length).toBe(1);
    expect(usage[0]).toMatchObject({ kind: 'speech', status: 'ok', units: { characters: 12 } });
  });

  it('a video task reports its seconds and task id when created', async () => {
    usage.length = 0;
    const response = await post('/v1/video/generations', { model: 'local-video', prompt: 'a sunrise', seconds: 4 });
    expect(response.status).toBe(200);
    const task = (await response.json()) as { id?: string; task_id?: string };
    await expect.poll(() => usage.length).toBe(1);
    expect(usage[0]).toMatchObject({ kind: 'video', status: 'ok', units: { videoSeconds: 4 }, responseId: task.id ?? task.task_id });
  });

  it('media counts against the key’s limits like text', async () => {
    await withinOneMinute();
    expect((await post('/v1/images/generations', { model: 'local-image', prompt: 'one', size: '256x256' }, 'sk-one')).status).toBe(200);
    const refused = await post('/v1/audio/speech', { model: 'local-speech', input: 'two', voice: 'en_female_anna_v1' }, 'sk-one');
    expect(refused.status).toBe(429);
    expect(refused.headers.get('x-ratelimit-remaining-requests')).toBe('0');
  });
});
