import { crc32, deflateSync } from 'node:zlib';
import { toFile } from 'openai';
import { describe, expect, it } from 'vitest';
import { decodePng, encodePng, type RgbaImage } from '../../src/providers/codecs/png.js';
import { FAKE_PNG_B64, requestsTo } from '../fakes/fake-openai-media.js';
import { auth, mediaGateway, served, useMediaRig } from './helpers.js';

const rig = useMediaRig();

function solid(width: number, height: number, rgba: [number, number, number, number]): RgbaImage {
  const pixels = new Uint8Array(width * height * 4);
  for (let p = 0; p < pixels.length; p += 4) pixels.set(rgba, p);
  return { width, height, pixels };
}

/** A PNG bomb: a header declaring `side`×`side` RGBA pixels, and zlib data that really inflates to all of them (zeros). */
function pngBomb(side: number): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(side, 0);
  header.writeUInt32BE(side, 4);
  header.set([8, 6, 0, 0, 0], 8); // 8-bit RGBA, no interlace
  const rows = deflateSync(Buffer.alloc((side * 4 + 1) * side), { level: 9 });
  const chunk = (type: string, body: Buffer) => {
    const typed = Buffer.concat([Buffer.from(type, 'latin1'), body]);
    const length = Buffer.alloc(4);
    length.writeUInt32BE(body.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(typed));
    return Buffer.concat([length, typed, crc]);
  };
  const signature = Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]);
  return Buffer.concat([signature, chunk('IHDR', header), chunk('IDAT', rows), chunk('IEND', Buffer.alloc(0))]);
}

const red = Buffer.from(encodePng(solid(8, 8, [255, 0, 0, 255])));
const blue = Buffer.from(encodePng(solid(8, 8, [0, 0, 255, 255])));

describe('edits: OpenAI-compatible upstream (multipart sent on)', () => {
  it('sends every file part with its field name, file name and type, and the mapped model', async () => {
    const mask = Buffer.from(encodePng(solid(8, 8, [0, 0, 0, 0])));
    const result = await rig.client.images.edit({
      model: 'oai-image',
      prompt: 'make it purple',
      image: [await toFile(red, 'red.png', { type: 'image/png' }), await toFile(blue, 'blue.png', { type: 'image/png' })],
      mask: await toFile(mask, 'mask.png', { type: 'image/png' }),
      size: '1024x1024',
      input_fidelity: 'high',
      quality: 'high',
    });
    expect(result.data![0]!.b64_json).toBe(FAKE_PNG_B64);

    const [sent] = requestsTo(rig.openaiFake, 'POST', '/v1/images/edits').slice(-1);
    expect(sent!.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    expect(sent!.headers.authorization).toBe('Bearer sk-upstream-openai');
    const fields = Object.fromEntries(sent!.parts!.filter((part) => part.value !== undefined).map((part) => [part.name, part.value]));
    expect(fields).toEqual({ model: 'gpt-image-1.5', prompt: 'make it purple', size: '1024x1024', input_fidelity: 'high', quality: 'high' });
    const files = sent!.parts!.filter((part) => part.data !== undefined);
    expect(files.map((part) => [part.name, part.filename, part.contentType])).toEqual([
      ['image[]', 'red.png', 'image/png'],
      ['image[]', 'blue.png', 'image/png'],
      ['mask', 'mask.png', 'image/png'],
    ]);
    expect(files[0]!.data!.equals(red)).toBe(true);
    expect(files[1]!.data!.equals(blue)).toBe(true);
    expect(files[2]!.data!.equals(mask)).toBe(true);
  });

  it('sends a single file as `image`, and numbers and booleans as the client wrote them', async () => {
    const stream = await rig.client.images.edit({
      model: 'oai-image',
      prompt: 'p',
      image: await toFile(red, 'one.png', { type: 'image/png' }),
      n: 1,
      stream: true,
      partial_images: 2,
    });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    expect(types).toEqual(['image_edit.partial_image', 'image_edit.partial_image', 'image_edit.completed']);
    const [sent] = requestsTo(rig.openaiFake, 'POST', '/v1/images/edits').slice(-1);
    expect(sent!.parts!.map((part) => [part.name, part.value ?? part.filename])).toEqual([
      ['model', 'gpt-image-1.5'],
      ['prompt', 'p'],
      ['n', '1'],
      ['stream', 'true'],
      ['partial_images', '2'],
      ['image', 'one.png'],
    ]);
  });

  it('accepts a repeated `image` field', async () => {
    const form = new FormData();
    form.append('model', 'oai-image');
    form.append('prompt', 'two');
    form.append('image', new Blob([red], { type: 'image/png' }), 'a.png');
    form.append('image', new Blob([blue], { type: 'image/png' }), 'b.png');
    const response = await fetch(`${rig.app.server.url}/v1/images/edits`, { method: 'POST', headers: auth, body: form });
    expect(response.status).toBe(200);
    const [sent] = requestsTo(rig.openaiFake, 'POST', '/v1/images/edits').slice(-1);
    expect(sent!.parts!.filter((part) => part.data).map((part) => [part.name, part.filename])).toEqual([
      ['image', 'a.png'],
      ['image', 'b.png'],
    ]);
  });
});

describe('edits: family rules', () => {
  it('gpt-image does no edits; seedream takes no mask and n = 1', async () => {
    const image = await toFile(red, 'red.png', { type: 'image/png' });
    await expect(rig.client.images.edit({ model: 'gpt-image', prompt: 'x', image })).rejects.toMatchObject({ status: 400, param: 'model' });
    await expect(rig.client.images.edit({ model: 'seedream', prompt: 'x', image, mask: await toFile(red, 'm.png') })).rejects.toMatchObject({
      status: 400,
      param: 'mask',
    });
    await expect(rig.client.images.edit({ model: 'seedream', prompt: 'x', image, n: 2 })).rejects.toMatchObject({ status: 400, param: 'n' });
    const eleven = await Promise.all(Array.from({ length: 11 }, (_, i) => toFile(red, `${i}.png`, { type: 'image/png' })));
    await expect(rig.client.images.edit({ model: 'seedream', prompt: 'x', image: eleven })).rejects.toMatchObject({ status: 400, param: 'image' });
  });
});

describe('edits: Seedream on Ark', () => {
  it('sends the uploads as data URLs in `image`, one image out, base64 back', async () => {
    const result = await rig.client.images.edit({
      model: 'seedream',
      prompt: 'swap the colours',
      image: [await toFile(red, 'r.png', { type: 'image/png' }), await toFile(blue, 'b.png', { type: 'image/png' })],
    });
    const [sent] = requestsTo(rig.arkFake, 'POST', '/api/v3/images/generations').slice(-1);
    expect(sent!.json).toEqual({
      model: 'doubao-seedream-4-0-250828',
      prompt: 'swap the colours',
      image: [`data:image/png;base64,${red.toString('base64')}`, `data:image/png;base64,${blue.toString('base64')}`],
      response_format: 'b64_json',
      sequential_image_generation: 'disabled',
      stream: false,
    });
    expect(result.data![0]!.b64_json).toBe(FAKE_PNG_B64);
  });
});

describe('edits: the local model', () => {
  it('edits a generated picture: same size, changed pixels, only inside the mask', async () => {
    const generated = await rig.client.images.generate({ model: 'local-image', prompt: 'a house', size: '32x16' as '1024x1024' });
    const source = Buffer.from(generated.data![0]!.b64_json!, 'base64');
    // Transparent (editable) on the left half only.
    const mask = solid(32, 16, [0, 0, 0, 255]);
    for (let y = 0; y < 16; y++) for (let x = 0; x < 16; x++) mask.pixels[(y * 32 + x) * 4 + 3] = 0;
    const edited = await rig.client.images.edit({
      model: 'local-image',
      prompt: 'paint it like a sunset',
      image: await toFile(source, 'house.png', { type: 'image/png' }),
      mask: await toFile(Buffer.from(encodePng(mask)), 'mask.png', { type: 'image/png' }),
    });
    const before = decodePng(source, { maxSide: 32 });
    const after = decodePng(Buffer.from(edited.data![0]!.b64_json!, 'base64'), { maxSide: 32 });
    expect([after.width, after.height]).toEqual([32, 16]);
    let changedLeft = 0;
    let changedRight = 0;
    for (let y = 0; y < 16; y++) {
      for (let x = 0; x < 32; x++) {
        const p = (y * 32 + x) * 4;
        const changed = [0, 1, 2].some((c) => before.pixels[p + c] !== after.pixels[p + c]);
        if (changed && x < 16) changedLeft++;
        if (changed && x >= 16) changedRight++;
      }
    }
    expect(changedLeft).toBeGreaterThan(100);
    expect(changedRight).toBe(0);
  });

  it('streams image_edit partial images', async () => {
    const stream = await rig.client.images.edit({
      model: 'local-image',
      prompt: 'p',
      image: await toFile(red, 'r.png', { type: 'image/png' }),
      stream: true,
      partial_images: 1,
    });
    const events: { type: string; b64_json: string }[] = [];
    for await (const event of stream) events.push(event);
    expect(events.map((event) => event.type)).toEqual(['image_edit.partial_image', 'image_edit.completed']);
    for (const event of events) expect(decodePng(Buffer.from(event.b64_json, 'base64'), { maxSide: 8 }).width).toBe(8);
  });

  it('refuses a PNG bomb from its header: 4096x4096 pixels in ~70 KB is a 400 naming the file, like a generation over 2048 a side', async () => {
    const bomb = pngBomb(4096);
    expect(bomb.length).toBeLessThan(100_000);
    const refused = rig.client.images.edit({ model: 'local-image', prompt: 'p', image: await toFile(bomb, 'bomb.png', { type: 'image/png' }) });
    await expect(refused).rejects.toMatchObject({
      status: 400,
      param: 'image',
      code: 'invalid_image',
      message: expect.stringContaining('4096x4096 is larger than 2048 pixels a side'),
    });
    const mask = rig.client.images.edit({
      model: 'local-image',
      prompt: 'p',
      image: await toFile(red, 'r.png', { type: 'image/png' }),
      mask: await toFile(bomb, 'm.png', { type: 'image/png' }),
    });
    await expect(mask).rejects.toMatchObject({ status: 400, param: 'mask', code: 'invalid_image' });
  });

  it('says which file it cannot read', async () => {
    await expect(
      rig.client.images.edit({ model: 'local-image', prompt: 'p', image: await toFile(Buffer.from('GIF89a-not-png'), 'x.gif', { type: 'image/gif' }) }),
    ).rejects.toMatchObject({ status: 400, param: 'image' });
  });
});

describe('edits: multipart limits (413 or 400, never a crash or a hang)', () => {
  const limited = async () => served(mediaGateway(undefined, { limits: { uploadFiles: 2, uploadFileBytes: 1000 } }));

  function multipart(parts: { name: string; value: string | Buffer; filename?: string }[], boundary = 'xBOUNDARYx', end = true): Buffer {
    const chunks: Buffer[] = [];
    for (const part of parts) {
      const disposition = `Content-Disposition: form-data; name="${part.name}"${part.filename ? `; filename="${part.filename}"\r\nContent-Type: image/png` : ''}`;
      chunks.push(Buffer.from(`--${boundary}\r\n${disposition}\r\n\r\n`), Buffer.from(part.value), Buffer.from('\r\n'));
    }
    if (end) chunks.push(Buffer.from(`--${boundary}--\r\n`));
    return Buffer.concat(chunks);
  }

  async function post(url: string, body: Buffer, contentType = 'multipart/form-data; boundary=xBOUNDARYx') {
    const response = await fetch(`${url}/v1/images/edits`, { method: 'POST', headers: { ...auth, 'content-type': contentType }, body: new Uint8Array(body) });
    return { status: response.status, error: ((await response.json()) as { error: { param: string | null; code: string | null } }).error };
  }

  it('413 for too many files, a file too large, a field too large; 400 for malformed bodies', async () => {
    const app = await limited();
    try {
      const base = [
        { name: 'model', value: 'local-image' },
        { name: 'prompt', value: 'p' },
      ];
      const small = Buffer.alloc(100, 1);
      const three = await post(app.server.url, multipart([...base, ...[1, 2, 3].map((i) => ({ name: 'image[]', value: small, filename: `${i}.png` }))]));
      expect(three).toMatchObject({ status: 413, error: { code: 'request_too_large', param: 'image' } });

      const big = await post(app.server.url, multipart([...base, { name: 'image', value: Buffer.alloc(5000, 1), filename: 'big.png' }]));
      expect(big).toMatchObject({ status: 413, error: { code: 'request_too_large', param: 'image' } });

      const longPrompt = await post(
        app.server.url,
        multipart([
          { name: 'model', value: 'local-image' },
          { name: 'prompt', value: 'x'.repeat(1024 * 1024 + 10) },
        ]),
      );
      expect(longPrompt).toMatchObject({ status: 413, error: { param: 'prompt' } });

      const truncated = await post(app.server.url, multipart([...base, { name: 'image', value: small, filename: 'a.png' }], 'xBOUNDARYx', false));
      expect(truncated.status).toBe(400);

      const noBoundary = await post(app.server.url, Buffer.from('hello'), 'multipart/form-data');
      expect(noBoundary).toMatchObject({ status: 400, error: { code: 'invalid_content_type' } });

      const json = await post(app.server.url, Buffer.from('{}'), 'application/json');
      expect(json.status).toBe(400);

      const noImage = await post(app.server.url, multipart(base));
      expect(noImage).toMatchObject({ status: 400, error: { param: 'image', code: 'missing_required_parameter' } });
    } finally {
      await app.close();
    }
  });
});
