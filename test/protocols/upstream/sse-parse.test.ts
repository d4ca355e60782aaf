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
});
