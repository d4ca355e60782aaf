import { toFile } from 'openai';
import { describe, expect, it } from 'vitest';
import { encodePng } from '../../src/providers/codecs/png.js';
import { localEmbeddings } from '../../src/providers/local/local-embeddings.js';
import { localGenerateImage, MAX_LOCAL_IMAGE_PIXELS } from '../../src/providers/local/local-images.js';
import { LocalVideos } from '../../src/providers/local/local-videos.js';
import type { ImageResult } from '../../src/providers/media.js';
import { loopTurnsDuring, useMediaRig } from './helpers.js';

/**
 * Security review finding 6: the local image, embedding and video models did a whole request's
 * work in one task (128 images of 2048² blocked the process 27.7 s, 2,048 × 16 KB embeddings
 * 7 s, an uncached 640x640 clip 0.7 s). Each now lets the event loop turn between bounded pieces
 * (counted here, never timed), and the images of one request are capped.
 */

const rig = useMediaRig();

describe('local images: n × pixels capped, one picture per turn of the loop', () => {
  it(`more than ${MAX_LOCAL_IMAGE_PIXELS} pixels in one request is a 400 naming n, for generations and edits`, async () => {
    for (const [n, size] of [
      [5, '2048x2048'],
      [128, '2048x2048'],
      [17, '1024x1024'],
    ] as const) {
      const error = await rig.client.images.generate({ model: 'local-image', prompt: 'p', n, size }).catch((caught: unknown) => caught);
      expect(error).toMatchObject({ status: 400, param: 'n' });
    }
    const picture = { width: 1024, height: 1024, pixels: new Uint8Array(1024 * 1024 * 4).fill(255) };
    const image = await toFile(Buffer.from(encodePng(picture)), 'in.png', { type: 'image/png' });
    const error = await rig.client.images.edit({ model: 'local-image', prompt: 'p', image, n: 17 }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ status: 400, param: 'n' });
    const edited = await rig.client.images.edit({ model: 'local-image', prompt: 'p', image, n: 1 });
    expect(edited.data).toHaveLength(1);
  });

  it('each picture is drawn in one turn of the loop and encoded in the next', async () => {
    let result: ImageResult | undefined;
    const turns = await loopTurnsDuring(async () => {
      result = (await localGenerateImage({ model: 'local-image', prompt: 'p', n: 8, size: '64x64' })) as ImageResult;
    });
    expect(result!.data).toHaveLength(8);
    expect(turns).toBeGreaterThanOrEqual(15);
  });
});

describe('local embeddings: the loop turns between bounded batches of features', () => {
  it('64 inputs of 16 KB are hashed over many turns, to the same vectors one at a time', async () => {
    const inputs = Array.from({ length: 64 }, (_, index) => `word${index} `.repeat(3000).slice(0, 16_000));
    let many: Awaited<ReturnType<typeof localEmbeddings>> | undefined;
    const turns = await loopTurnsDuring(async () => {
      many = await localEmbeddings({ model: 'local-embedding', input: inputs });
    });
    // About 19,000 features an input (words and trigrams), 64 Ki features a turn.
    expect(turns).toBeGreaterThanOrEqual(15);
    const one = await localEmbeddings({ model: 'local-embedding', input: inputs[63]! });
    expect(many!.data[63]!.embedding).toEqual(one.data[0]!.embedding);
    expect(many!.usage).toEqual({ prompt_tokens: 64 * 4000 });
  });
});

describe('local videos: rendered a frame per turn, once per clip', () => {
  it('an uncached clip lets the loop turn for every frame; two downloads at once share one rendering', async () => {
    const videos = new LocalVideos(0);
    const job = videos.create({ model: 'local-video', prompt: 'p', size: '64x64', seconds: 2 });
    let sizes: string[] = [];
    const turns = await loopTurnsDuring(async () => {
      const both = await Promise.all([videos.content(job, undefined), videos.content(job, 'bytes=0-9')]);
      sizes = both.map((content) => content.headers['content-length']!);
    });
    // 2 s at 12 frames a second.
    expect(turns).toBeGreaterThanOrEqual(24);
    expect(sizes[1]).toBe('10');
    const cached = await loopTurnsDuring(() => videos.content(job, undefined));
    expect(cached).toBe(0);
  });
});
