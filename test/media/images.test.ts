import type OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { decodePng, pngSize } from '../../src/providers/codecs/png.js';
import { FAKE_PNG_B64, requestsTo } from '../fakes/fake-openai-media.js';
import { jsonHeaders, useMediaRig } from './helpers.js';

const rig = useMediaRig();

function png(b64: string | undefined) {
  const bytes = Buffer.from(b64 ?? '', 'base64');
  expect([...bytes.subarray(0, 8)]).toEqual([137, 80, 78, 71, 13, 10, 26, 10]);
  return decodePng(bytes, { maxSide: 2048 });
}

describe('images: the local model', () => {
  it('answers a real PNG of the requested size through the OpenAI SDK', async () => {
    const result = await rig.client.images.generate({ model: 'local-image', prompt: 'a red fox in the snow', size: '64x48' as '1024x1024' });
    expect(result.created).toBeTypeOf('number');
    expect(result.data).toHaveLength(1);
    const image = png(result.data![0]!.b64_json);
    expect([image.width, image.height]).toEqual([64, 48]);
    // Not a blank picture: more than a handful of distinct colours.
    const colours = new Set<number>();
    for (let p = 0; p < image.pixels.length; p += 4) colours.add((image.pixels[p]! << 16) | (image.pixels[p + 1]! << 8) | image.pixels[p + 2]!);
    expect(colours.size).toBeGreaterThan(10);
    expect(result.usage).toMatchObject({ input_tokens: expect.any(Number), output_tokens: expect.any(Number), total_tokens: expect.any(Number) });
    expect(result).toMatchObject({ size: '64x48', output_format: 'png' });
  });

  it('draws the same picture for the same prompt, n pictures for n', async () => {
    const first = await rig.client.images.generate({ model: 'local-image', prompt: 'same', size: '32x32' as '1024x1024', n: 2 });
    const second = await rig.client.images.generate({ model: 'local-image', prompt: 'same', size: '32x32' as '1024x1024' });
    expect(first.data).toHaveLength(2);
    expect(first.data![0]!.b64_json).toBe(second.data![0]!.b64_json);
  });

  it('streams partial images, then the completed one, honouring partial_images', async () => {
    const stream = await rig.client.images.generate({
      model: 'local-image',
      prompt: 'a lighthouse',
      size: '64x64' as '1024x1024',
      stream: true,
      partial_images: 2,
    });
    const events: { type: string; b64_json?: string; partial_image_index?: number }[] = [];
    for await (const event of stream) events.push(event);
    expect(events.map((event) => event.type)).toEqual(['image_generation.partial_image', 'image_generation.partial_image', 'image_generation.completed']);
    expect(events.slice(0, 2).map((event) => event.partial_image_index)).toEqual([0, 1]);
    const pictures = events.map((event) => png(event.b64_json));
    for (const picture of pictures) expect([picture.width, picture.height]).toEqual([64, 64]);
    // Each partial is a coarser version: all three differ.
    expect(new Set(events.map((event) => event.b64_json)).size).toBe(3);
    expect(events[2]).toMatchObject({ size: '64x64', created_at: expect.any(Number), usage: expect.any(Object) });
  });

  it('streams only the completed image with partial_images 0, and rejects more than 3', async () => {
    const stream = await rig.client.images.generate({ model: 'local-image', prompt: 'x', size: '16x16' as '1024x1024', stream: true, partial_images: 0 });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    expect(types).toEqual(['image_generation.completed']);
    await expect(rig.client.images.generate({ model: 'local-image', prompt: 'x', stream: true, partial_images: 4 })).rejects.toMatchObject({
      status: 400,
      param: 'partial_images',
    });
  });

  it('answers a data URL for response_format url, and 400 for what it cannot do', async () => {
    const result = await rig.client.images.generate({ model: 'local-image', prompt: 'x', size: '16x16' as '1024x1024', response_format: 'url' });
    expect(result.data![0]!.url).toMatch(/^data:image\/png;base64,/);
    expect(pngSize(Buffer.from(result.data![0]!.url!.split(',')[1]!, 'base64'))).toEqual({ width: 16, height: 16 });
    await expect(rig.client.images.generate({ model: 'local-image', prompt: 'x', output_format: 'webp' })).rejects.toMatchObject({
      status: 400,
      param: 'output_format',
    });
    await expect(rig.client.images.generate({ model: 'local-image', prompt: 'x', size: '5000x5000' as '1024x1024' })).rejects.toMatchObject({
      status: 400,
      param: 'size',
    });
    await expect(rig.client.images.generate({ model: 'local-chat', prompt: 'x' })).rejects.toMatchObject({ status: 400, param: 'model' });
  });
});

describe("images: the spec's family rules (section 4 rule 4, section 8)", () => {
  const generate = (body: Record<string, unknown>) =>
    fetch(`${rig.app.server.url}/v1/images/generations`, { method: 'POST', headers: jsonHeaders, body: JSON.stringify(body) });

  it.each([
    ['gpt-image takes n = 1 only', { model: 'gpt-image', prompt: 'x', n: 2 }, 'n'],
    ['gpt-image takes no reference image', { model: 'gpt-image', prompt: 'x', image: 'https://example.com/a.png' }, 'image'],
    ['gpt-image takes no reference images', { model: 'gpt-image', prompt: 'x', image: ['https://example.com/a.png', 'https://example.com/b.png'] }, 'image'],
    ['seedream takes n = 1 only', { model: 'seedream', prompt: 'x', n: 3 }, 'n'],
    [
      'seedream takes at most 10 references',
      { model: 'seedream', prompt: 'x', image: Array.from({ length: 11 }, (_, i) => `https://example.com/${i}.png`) },
      'image',
    ],
    ['seedream takes at least 1 reference in an array', { model: 'seedream', prompt: 'x', image: [] }, 'image'],
    ['references are strings', { model: 'seedream', prompt: 'x', image: ['https://example.com/a.png', 5] }, 'image[1]'],
  ])('%s → 400 naming the field, nothing sent upstream', async (_name, body, param) => {
    const before = rig.openaiFake.requests.length + rig.arkFake.requests.length;
    const response = await generate(body);
    expect(response.status).toBe(400);
    expect((await response.json()).error).toMatchObject({ param, type: 'invalid_request_error' });
    expect(rig.openaiFake.requests.length + rig.arkFake.requests.length).toBe(before);
  });

  it('accepts n = 1 and text only for both families', async () => {
    expect((await generate({ model: 'gpt-image', prompt: 'x', n: 1 })).status).toBe(200);
    expect((await generate({ model: 'seedream', prompt: 'x', n: 1 })).status).toBe(200);
    expect((await generate({ model: 'seedream', prompt: 'x', image: 'https://example.com/a.png' })).status).toBe(200);
  });
});

describe('images: OpenAI-compatible upstream', () => {
  it("forwards the client's fields as they are, with the upstream model id", async () => {
    const body = {
      model: 'oai-image',
      prompt: 'a cat',
      size: '1536x1024',
      quality: 'high',
      background: 'transparent',
      output_format: 'webp',
      output_compression: 80,
      moderation: 'low',
      user: 'u-1',
      some_new_field: { a: 1 },
    };
    const result = await rig.client.images.generate(body as unknown as OpenAI.ImageGenerateParamsNonStreaming);
    const [sent] = requestsTo(rig.openaiFake, 'POST', '/v1/images/generations').slice(-1);
    expect(sent!.json).toEqual({ ...body, model: 'gpt-image-1.5' });
    expect(sent!.headers.authorization).toBe('Bearer sk-upstream-openai');
    expect(result.data![0]!.b64_json).toBe(FAKE_PNG_B64);
    expect(result).toMatchObject({ created: 1_700_000_000, size: '1024x1024', quality: 'high', usage: { total_tokens: 15 } });
  });

  it('passes the upstream partial-image stream through as image_generation events', async () => {
    const stream = await rig.client.images.generate({ model: 'gpt-image', prompt: 'a cat', stream: true, partial_images: 2 });
    const events: { type: string; partial_image_index?: number }[] = [];
    for await (const event of stream) events.push(event);
    expect(events.map((event) => event.type)).toEqual(['image_generation.partial_image', 'image_generation.partial_image', 'image_generation.completed']);
    const [sent] = requestsTo(rig.openaiFake, 'POST', '/v1/images/generations').slice(-1);
    expect(sent!.json).toEqual({ model: 'gpt-image-1', prompt: 'a cat', stream: true, partial_images: 2 });
    expect(sent!.headers.accept).toBe('text/event-stream');
  });

  it('passes an upstream error on with its status and message', async () => {
    rig.openaiFake.failNext = {
      status: 400,
      body: {
        error: { message: 'Your request was rejected by the safety system.', type: 'image_generation_user_error', param: null, code: 'moderation_blocked' },
      },
    };
    await expect(rig.client.images.generate({ model: 'oai-image', prompt: 'bad' })).rejects.toMatchObject({
      status: 400,
      code: 'moderation_blocked',
      message: expect.stringContaining('safety system'),
    });
  });
});

describe('images: Seedream on Ark', () => {
  it("sends Ark's fields: the references, one image, and the upstream model", async () => {
    const references = ['https://example.com/a.png', 'data:image/png;base64,iVBORw0KGgo='];
    const result = await rig.client.images.generate({
      model: 'seedream',
      prompt: 'merge them',
      image: references,
      size: '2K',
      watermark: false,
      seed: 42,
    } as unknown as OpenAI.ImageGenerateParamsNonStreaming);
    const [sent] = requestsTo(rig.arkFake, 'POST', '/api/v3/images/generations').slice(-1);
    expect(sent!.json).toEqual({
      model: 'doubao-seedream-4-0-250828',
      prompt: 'merge them',
      image: references,
      size: '2K',
      watermark: false,
      seed: 42,
      response_format: 'url',
      sequential_image_generation: 'disabled',
      stream: false,
    });
    expect(sent!.headers.authorization).toBe('Bearer ark-upstream-key');
    expect(result.data![0]!.url).toBe('https://ark-cdn.example/image.jpeg');
    expect(result.usage).toMatchObject({ generated_images: 1 });
  });

  it('sends a single reference as a string and text-only without `image`', async () => {
    await rig.client.images.generate({
      model: 'seedream',
      prompt: 'one',
      image: 'https://example.com/a.png',
      response_format: 'b64_json',
    } as unknown as OpenAI.ImageGenerateParamsNonStreaming);
    expect(requestsTo(rig.arkFake, 'POST', '/api/v3/images/generations').at(-1)!.json).toMatchObject({
      image: 'https://example.com/a.png',
      response_format: 'b64_json',
    });
    await rig.client.images.generate({ model: 'seedream', prompt: 'text only', size: 'auto' });
    const sent = requestsTo(rig.arkFake, 'POST', '/api/v3/images/generations').at(-1)!.json;
    expect(sent).not.toHaveProperty('image');
    expect(sent).not.toHaveProperty('size');
  });

  it('answers a stream as completed events (b64 asked from Ark)', async () => {
    const stream = await rig.client.images.generate({ model: 'seedream', prompt: 'x', stream: true });
    const events: { type: string; b64_json?: string }[] = [];
    for await (const event of stream) events.push(event);
    expect(events).toEqual([expect.objectContaining({ type: 'image_generation.completed', b64_json: FAKE_PNG_B64 })]);
    expect(requestsTo(rig.arkFake, 'POST', '/api/v3/images/generations').at(-1)!.json).toMatchObject({ response_format: 'b64_json', stream: false });
  });

  it('rejects OpenAI-only fields Seedream cannot honour', async () => {
    await expect(rig.client.images.generate({ model: 'seedream', prompt: 'x', quality: 'high' })).rejects.toMatchObject({ status: 400, param: 'quality' });
    await expect(rig.client.images.generate({ model: 'seedream', prompt: 'x', output_format: 'webp' })).rejects.toMatchObject({
      status: 400,
      param: 'output_format',
    });
  });
});
