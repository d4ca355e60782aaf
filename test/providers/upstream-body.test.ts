import busboy from 'busboy';
import { describe, expect, it } from 'vitest';
import { multipartBody } from '../../src/providers/http/multipart-body.js';
import { stringifyBody } from '../../src/providers/http/stringify-body.js';
import { wireBody, type UpstreamBody } from '../../src/providers/http/upstream-body.js';

/** The bytes undici would send for a body, and the length it would declare. */
async function sent(body: UpstreamBody): Promise<{ bytes: Buffer; length: number | undefined; kind: string }> {
  const wire = wireBody(body);
  if (typeof wire.body === 'string') return { bytes: Buffer.from(wire.body), length: wire.length, kind: 'string' };
  if (wire.body instanceof Uint8Array) return { bytes: Buffer.from(wire.body), length: wire.length, kind: 'bytes' };
  const chunks: Uint8Array[] = [];
  for await (const chunk of wire.body) chunks.push(chunk);
  return { bytes: Buffer.concat(chunks), length: wire.length, kind: 'iterable' };
}

describe('wireBody', () => {
  it('gives undici small strings and bytes as they are', async () => {
    expect(await sent('{"a":1}')).toEqual({ bytes: Buffer.from('{"a":1}'), length: undefined, kind: 'string' });
    expect((await sent(new Uint8Array([1, 2, 3]))).kind).toBe('bytes');
    // Small text pieces are joined: nothing is gained by streaming them.
    expect(await sent(['{"model":', '"m"', '}'])).toEqual({ bytes: Buffer.from('{"model":"m"}'), length: undefined, kind: 'string' });
  });

  it('streams a large string in slices with its exact UTF-8 length, surrogate pairs whole', async () => {
    // The emoji straddles the first 256 K slice boundary.
    const text = `${'a'.repeat(256 * 1024 - 1)}😀${'é'.repeat(600_000)}${'x'.repeat(700_000)}`;
    const out = await sent(text);
    expect(out.kind).toBe('iterable');
    expect(out.length).toBe(Buffer.byteLength(text));
    expect(out.bytes.equals(Buffer.from(text))).toBe(true);
  });

  it('streams mixed pieces (text and bytes) in order with their total length', async () => {
    const file = Buffer.alloc(2 * 1024 * 1024, 7);
    const pieces = ['head ✓\r\n', file, '\r\n', 'x'.repeat(10)];
    const out = await sent(pieces);
    expect(out.kind).toBe('iterable');
    expect(out.bytes.equals(Buffer.concat([Buffer.from('head ✓\r\n'), file, Buffer.from('\r\n'), Buffer.from('x'.repeat(10))]))).toBe(true);
    expect(out.length).toBe(out.bytes.length);
  });
});

describe('stringifyBody', () => {
  const join = (body: UpstreamBody) => (typeof body === 'string' ? body : (body as string[]).join(''));

  it('is JSON.stringify for a body without long strings', async () => {
    const body = { model: 'm', messages: [{ role: 'user', content: 'hi "there"\n' }], n: 1, x: null, skip: undefined };
    expect(await stringifyBody(body)).toBe(JSON.stringify(body));
  });

  it('gives the same text as JSON.stringify with long strings, escapes and surrogates included', async () => {
    const image = 'QUJD'.repeat(300_000);
    const awkward = `${'"\\\n\u0001'.repeat(70_000)}😀${'z'.repeat(262_140)}😀 \ud800 lone`;
    const body = {
      model: 'claude',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: image } },
            { type: 'text', text: awkward },
          ],
        },
      ],
      when: new Date(0),
      nested: { list: [image, 'short', { deep: awkward }] },
      decoy: '\u0000not-a-placeholder:0',
    };
    const out = await stringifyBody(body);
    expect(Array.isArray(out)).toBe(true);
    expect(join(out)).toBe(JSON.stringify(body));
  });

  it('escapes a long string slice by slice, handing the event loop back in between', async () => {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 0);
    await stringifyBody({ data: 'A'.repeat(4 * 1024 * 1024) });
    clearInterval(timer);
    expect(ticks).toBeGreaterThan(0);
  });
});

describe('multipartBody', () => {
  it('sends the file chunks as they are, and parses back to the same parts', async () => {
    const chunks = [Buffer.alloc(70_000, 1), Buffer.alloc(3, 2), Buffer.alloc(100_000, 3)];
    const { body, contentType } = multipartBody([
      { name: 'model', value: 'gpt-image-1' },
      { name: 'prompt', value: 'make it "blue"\nplease' },
      { name: 'image[]', value: { data: chunks, filename: 'a.png', contentType: 'image/png' } },
      { name: 'mask', value: { data: new Uint8Array([9, 9]), filename: 'm"ask.png', contentType: 'image/png' } },
    ]);
    // The file chunks themselves go out, not a copy.
    for (const chunk of chunks) expect(body).toContain(chunk);
    const { bytes, length } = await sent(body);
    expect(length).toBe(bytes.length);

    const parts: { name: string; value?: string; filename?: string | undefined; data?: Buffer }[] = [];
    await new Promise<void>((resolve, reject) => {
      const parser = busboy({ headers: { 'content-type': contentType } });
      parser.on('field', (name, value) => parts.push({ name, value }));
      parser.on('file', (name, stream, info) => {
        const data: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => data.push(chunk));
        stream.on('end', () => parts.push({ name, filename: info.filename, data: Buffer.concat(data) }));
      });
      parser.on('close', resolve);
      parser.on('error', reject);
      parser.end(bytes);
    });
    expect(parts).toEqual([
      { name: 'model', value: 'gpt-image-1' },
      { name: 'prompt', value: 'make it "blue"\nplease' },
      { name: 'image[]', filename: 'a.png', data: Buffer.concat(chunks) },
      { name: 'mask', filename: 'm%22ask.png', data: Buffer.from([9, 9]) },
    ]);
  });
});
