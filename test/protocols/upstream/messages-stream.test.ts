import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../../src/errors.js';
import { messagesStreamDecoder } from '../../../src/protocols/messages/decode-stream.js';
import { decodeText, fixture } from './helpers.js';

const ev = (event: Record<string, unknown>): string => `event: ${String(event.type)}\ndata: ${JSON.stringify(event)}\n\n`;
const messageStart = (usage: Record<string, unknown> = { input_tokens: 10, output_tokens: 1 }) =>
  ev({ type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-x', content: [], stop_reason: null, usage } });

describe('messagesStreamDecoder', () => {
  it('decodes thinking with its signature, text and tool_use, with cache usage', async () => {
    const { events, error } = await decodeText(messagesStreamDecoder, fixture('anthropic-thinking-text-tool.txt'), 23);
    expect(error).toBeUndefined();
    const created = events[0]?.type === 'start' ? events[0].created : 0;
    expect(events).toEqual([
      {
        type: 'start',
        id: 'msg_01XFDUDYJgAACzvnptvVoYEL',
        model: 'claude-sonnet-4-5-20250929',
        created,
        // Anthropic input excludes the cache: 24 + 1200 + 3000.
        usage: { input: 4224, cachedRead: 3000, cacheWrite: 1200, output: 1 },
      },
      { type: 'reasoning_delta', text: 'The user asks about Paris.' },
      { type: 'reasoning_delta', text: '\nI should call get_weather.' },
      { type: 'reasoning_end', signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds' },
      { type: 'text_delta', text: 'Let me check ' },
      { type: 'text_delta', text: 'the weather.' },
      { type: 'tool_call_start', id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', name: 'get_weather' },
      { type: 'tool_call_delta', arguments: '{"city": ' },
      { type: 'tool_call_delta', arguments: '"Paris"}' },
      { type: 'finish', reason: 'tool_calls', usage: { input: 4224, cachedRead: 3000, cacheWrite: 1200, output: 210 } },
    ]);
    expect(Math.abs(created - Date.now() / 1000)).toBeLessThan(5);
  });

  it('overwrites cumulative usage instead of adding, keeps the stop sequence, maps redacted thinking', async () => {
    const text = [
      messageStart({ input_tokens: 50, cache_read_input_tokens: 0, output_tokens: 1 }),
      ev({ type: 'content_block_start', index: 0, content_block: { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix' } }),
      ev({ type: 'content_block_stop', index: 0 }),
      ev({ type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } }),
      ev({ type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: '1, 2, 3' } }),
      ev({ type: 'content_block_stop', index: 1 }),
      ev({ type: 'message_delta', delta: { stop_reason: null }, usage: { output_tokens: 5 } }),
      ev({ type: 'message_delta', delta: { stop_reason: 'stop_sequence', stop_sequence: '4' }, usage: { output_tokens: 9 } }),
      ev({ type: 'message_stop' }),
    ].join('');
    const { events, error } = await decodeText(messagesStreamDecoder, text);
    expect(error).toBeUndefined();
    expect(events.slice(1)).toEqual([
      { type: 'reasoning_end', redacted: 'EmwKAhgBEgy3va3pzix' },
      { type: 'text_delta', text: '1, 2, 3' },
      { type: 'finish', reason: 'stop_sequence', stopSequence: '4', usage: { input: 50, cachedRead: 0, output: 9 } },
    ]);
  });

  it('sends a tool input given whole in the start block, skips server tool blocks', async () => {
    const text = [
      messageStart(),
      ev({ type: 'content_block_start', index: 0, content_block: { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: {} } }),
      ev({ type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"query":"x"}' } }),
      ev({ type: 'content_block_stop', index: 0 }),
      ev({ type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'toolu_2', name: 'f', input: { a: 1 } } }),
      ev({ type: 'content_block_stop', index: 1 }),
      ev({ type: 'message_delta', delta: { stop_reason: 'max_tokens' }, usage: { output_tokens: 3 } }),
      ev({ type: 'message_stop' }),
    ].join('');
    const { events, error } = await decodeText(messagesStreamDecoder, text);
    expect(error).toBeUndefined();
    expect(events.slice(1)).toEqual([
      { type: 'tool_call_start', id: 'toolu_2', name: 'f' },
      { type: 'tool_call_delta', arguments: '{"a":1}' },
      { type: 'finish', reason: 'length', usage: { input: 10, output: 3 } },
    ]);
  });

  it('gives a tool without input `{}` as arguments, as the JSON decoder does', async () => {
    const text = [
      messageStart(),
      ev({ type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_3', name: 'get_time', input: {} } }),
      ev({ type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '' } }),
      ev({ type: 'content_block_stop', index: 0 }),
      ev({ type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 3 } }),
      ev({ type: 'message_stop' }),
    ].join('');
    const { events, error } = await decodeText(messagesStreamDecoder, text);
    expect(error).toBeUndefined();
    expect(events.slice(1, 3)).toEqual([
      { type: 'tool_call_start', id: 'toolu_3', name: 'get_time' },
      { type: 'tool_call_delta', arguments: '{}' },
    ]);
  });

  it('throws an overloaded error as 503 after the events before it', async () => {
    const { events, error } = await decodeText(messagesStreamDecoder, fixture('anthropic-overloaded.txt'));
    expect(events.map((e) => e.type)).toEqual(['start', 'text_delta']);
    expect(events[1]).toEqual({ type: 'text_delta', text: 'Hi' });
    expect(error).toBeInstanceOf(GatewayError);
    expect(error).toMatchObject({ status: 503, type: 'overloaded_error', message: 'Overloaded' });
  });

  it('maps rate_limit_error to 429 and other errors to 502', async () => {
    const rate = await decodeText(messagesStreamDecoder, ev({ type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } }));
    expect(rate.error).toMatchObject({ status: 429, message: 'slow down' });
    const api = await decodeText(messagesStreamDecoder, messageStart() + ev({ type: 'error', error: { type: 'api_error', message: 'Internal' } }));
    expect(api.error).toMatchObject({ status: 502, type: 'api_error', message: 'Internal' });
  });

  it('throws 502 when the stream ends without message_stop', async () => {
    const { events, error } = await decodeText(messagesStreamDecoder, fixture('anthropic-cut.txt'));
    expect(events.slice(1)).toEqual([{ type: 'text_delta', text: 'Hel' }]);
    expect(error).toMatchObject({ status: 502, code: 'upstream_stream_cut', message: 'upstream stream ended early' });
    // message_delta alone is not the end either.
    const noStop = await decodeText(
      messagesStreamDecoder,
      messageStart() + ev({ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 1 } }),
    );
    expect(noStop.error).toMatchObject({ status: 502, code: 'upstream_stream_cut', message: 'upstream stream ended early' });
  });
});
