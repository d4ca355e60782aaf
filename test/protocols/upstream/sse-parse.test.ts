import { createParser } from 'eventsource-parser';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseSse, type SseMessage } from '../../../src/protocols/sse-parse.js';
import { byteChunks, fixture } from './helpers.js';

async function collect(source: AsyncIterable<Uint8Array>): Promise<SseMessage[]> {
  const out: SseMessage[] = [];
  for await (const message of parseSse(source)) out.push(message);
  return out;
}

describe('parseSse', () => {
  it('yields the same messages whatever the chunk boundaries', async () => {
    const text = fixture('anthropic-thinking-text-tool.txt');
    const whole = await collect(byteChunks(text, text.length));
    expect(whole).toHaveLength(18);
    expect(whole.at(-1)).toEqual({ event: 'message_stop', data: '{"type":"message_stop"}' });
    expect(whole[0]!.event).toBe('message_start');
    expect(JSON.parse(whole[2]!.data)).toEqual({ type: 'ping' });
    for (const size of [1, 2, 3, 7, 64]) {
      expect(await collect(byteChunks(text, size))).toEqual(whole);
    }
  });

  it('keeps a multi-byte character split across chunks', async () => {
    const text = 'data: {"t":"héllo 🌍 wörld"}\n\n';
    for (let size = 1; size <= 6; size++) {
      expect(await collect(byteChunks(text, size))).toEqual([{ data: '{"t":"héllo 🌍 wörld"}' }]);
    }
  });

  it('skips comments, joins multi-line data and keeps event names and ids', async () => {
    const text = ': keep-alive\n\nevent: a\nid: 7\ndata: line1\ndata: line2\n\r\ndata: [DONE]\n\n';
    expect(await collect(byteChunks(text, 5))).toEqual([{ event: 'a', id: '7', data: 'line1\nline2' }, { data: '[DONE]' }]);
  });

  it('keeps a last event whose closing blank line never came', async () => {
    expect(await collect(byteChunks('data: one\n\ndata: two', 4))).toEqual([{ data: 'one' }, { data: 'two' }]);
  });

  it('reads any stream exactly as eventsource-parser does, whatever its line ends and chunking', async () => {
    const line = fc.oneof(
      fc.string({ unit: fc.constantFrom('a', 'b', ' ', ':', '{', '}', '"', 'é') }).map((value) => `data: ${value}`),
      fc.string({ unit: fc.constantFrom('x', 'y', ' ') }).map((value) => `event:${value}`),
      fc.constantFrom('data:', 'data', ': comment', 'id: 4', 'retry: 10', 'unknown: field'),
    );
    const frame = fc.array(line, { minLength: 1, maxLength: 4 });
    const stream = fc.tuple(fc.array(frame, { maxLength: 6 }), fc.constantFrom('\n', '\r\n', '\r'), fc.integer({ min: 1, max: 9 }));
    await fc.assert(
      fc.asyncProperty(stream, async ([frames, eol, size]) => {
        const text = frames.map((lines) => lines.join(eol) + eol + eol).join('');
        const expected: SseMessage[] = [];
        const parser = createParser({
          onEvent: ({ event, data, id }) => expected.push({ data, ...(event ? { event } : {}), ...(id !== undefined ? { id } : {}) }),
        });
        parser.feed(`${text}\n\n`);
        const got = (await collect(byteChunks(text, size))).map(({ data, event, id }) => ({
          data,
          ...(event ? { event } : {}),
          ...(id !== undefined ? { id } : {}),
        }));
        expect(got).toEqual(expected);
      }),
    );
  });
});
