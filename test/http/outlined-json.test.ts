import { describe, expect, it } from 'vitest';
import { parseJsonOutlined } from '../../src/http/outlined-json.js';
import { stringifyBody } from '../../src/providers/http/stringify-body.js';
import { dataUrl, JoinedText } from '../../src/protocols/data-url.js';

const LONG = 'QUJD'.repeat(100_000); // 400 K characters of base64

const joined = (body: Awaited<ReturnType<typeof stringifyBody>>) =>
  typeof body === 'string' ? body : Buffer.concat([...(body instanceof Uint8Array ? [body] : body)].map((piece) => Buffer.from(piece))).toString();

describe('parseJsonOutlined', () => {
  it('gives what JSON.parse gives, long strings included', async () => {
    const text = JSON.stringify({
      model: 'm',
      messages: [
        {
          content: [
            { type: 'image', data: LONG },
            { type: 'text', text: 'hi' },
          ],
        },
      ],
      other: [LONG, 1],
    });
    expect(await parseJsonOutlined(text)).toEqual(JSON.parse(text));
  });

  it('parses a long string with escapes as JSON.parse does, and leaves a long key in place', async () => {
    const text = JSON.stringify({ escaped: `${LONG}\n"quoted"`, [LONG]: 'key', unicode: `é${LONG}` });
    expect(await parseJsonOutlined(text)).toEqual(JSON.parse(text));
  });

  it('throws the error JSON.parse throws for invalid JSON', async () => {
    for (const text of [`{"a":"${LONG}",}`, `{"a":"${LONG}\u0001"}`, `{"a":"${LONG}`]) {
      const expected = (() => {
        try {
          JSON.parse(text);
        } catch (error) {
          return (error as Error).message;
        }
      })();
      await expect(parseJsonOutlined(text)).rejects.toThrow(expected);
    }
  });
});

describe('a long data URL in an upstream request', () => {
  it('is serialized as the joined text, by stringifyBody and by JSON.stringify', async () => {
    const url = dataUrl('image/png', LONG);
    expect(url).toBeInstanceOf(JoinedText);
    const body = { messages: [{ content: [{ type: 'image_url', image_url: { url } }] }], note: 'x' };
    const expected = JSON.stringify({ messages: [{ content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${LONG}` } }] }], note: 'x' });
    expect(JSON.stringify(body)).toBe(expected);
    expect(joined(await stringifyBody(body))).toBe(expected);
  });

  it('stays plain text when the data is short', () => {
    expect(dataUrl('image/png', 'QUJD')).toBe('data:image/png;base64,QUJD');
  });
});
