import { describe, expect, it } from 'vitest';
import { chatStreamDecoder } from '../../../src/protocols/chat/decode-stream.js';
import { GatewayError } from '../../../src/errors.js';
import { decodeText, fixture } from './helpers.js';

const sse = (...chunks: unknown[]): string => chunks.map((c) => `data: ${typeof c === 'string' ? c : JSON.stringify(c)}\n\n`).join('');
const head = { id: 'chatcmpl-x', object: 'chat.completion.chunk', created: 1753120000, model: 'm' };
const delta = (d: Record<string, unknown>, finish: string | null = null) => ({ ...head, choices: [{ index: 0, delta: d, finish_reason: finish }] });

describe('chatStreamDecoder', () => {
  it('decodes two sequential parallel tool calls and the usage chunk', async () => {
    const { events, error } = await decodeText(chatStreamDecoder, fixture('chat-parallel-tools.txt'));
    expect(error).toBeUndefined();
    expect(events).toEqual([
      { type: 'start', id: 'chatcmpl-BvX1kq9ZQe3Lw7', model: 'gpt-4.1-2025-04-14', created: 1753120000 },
      { type: 'tool_call_start', id: 'call_KsYb0wQ2', name: 'get_weather' },
      { type: 'tool_call_delta', arguments: '{"ci' },
      { type: 'tool_call_delta', arguments: 'ty": "Pa' },
      { type: 'tool_call_delta', arguments: 'ris"}' },
      { type: 'tool_call_start', id: 'call_Vw2fT8nE', name: 'get_time' },
      { type: 'tool_call_delta', arguments: '{"tz"' },
      { type: 'tool_call_delta', arguments: ': "Europe/Paris"}' },
      { type: 'finish', reason: 'tool_calls', usage: { input: 82, cachedRead: 64, output: 47, reasoning: 0 } },
    ]);
  });

  it('keeps parts sequential when tool call fragments interleave', async () => {
    const { events, error } = await decodeText(chatStreamDecoder, fixture('chat-interleaved-tools.txt'));
    expect(error).toBeUndefined();
    expect(events).toEqual([
      { type: 'start', id: 'chatcmpl-7f3a', model: 'qwen3-32b', created: 1753120100 },
      { type: 'tool_call_start', id: 'call_a', name: 'lookup' },
      { type: 'tool_call_delta', arguments: '{"q":' },
      { type: 'tool_call_delta', arguments: '"alpha"}' },
      // call_b was buffered while call_a was incomplete, then goes live once call_a is whole.
      { type: 'tool_call_start', id: 'call_b', name: 'lookup' },
      { type: 'tool_call_delta', arguments: '{"q":"beta"' },
      { type: 'tool_call_delta', arguments: '}' },
      { type: 'finish', reason: 'tool_calls' },
    ]);
  });

  it('buffers several interleaved calls and emits each whole, in index order, at the finish', async () => {
    const call = (index: number, extra: Record<string, unknown>) => delta({ tool_calls: [{ index, ...extra }] });
    const text = sse(
      call(0, { id: 'c0', type: 'function', function: { name: 'f', arguments: '' } }),
      call(2, { id: 'c2', type: 'function', function: { name: 'h', arguments: '{"z":' } }),
      call(1, { id: 'c1', type: 'function', function: { name: 'g', arguments: '{"y":' } }),
      call(0, { function: { arguments: '{"x":0}' } }),
      call(1, { function: { arguments: '1}' } }),
      call(2, { function: { arguments: '2}' } }),
      delta({}, 'tool_calls'),
      '[DONE]',
    );
    const { events, error } = await decodeText(chatStreamDecoder, text, 9);
    expect(error).toBeUndefined();
    expect(events.slice(1)).toEqual([
      { type: 'tool_call_start', id: 'c0', name: 'f' },
      { type: 'tool_call_delta', arguments: '{"x":0}' },
      { type: 'tool_call_start', id: 'c1', name: 'g' },
      { type: 'tool_call_delta', arguments: '{"y":1}' },
      { type: 'tool_call_start', id: 'c2', name: 'h' },
      { type: 'tool_call_delta', arguments: '{"z":2}' },
      { type: 'finish', reason: 'tool_calls' },
    ]);
  });

  it('decodes reasoning_content, text and usage sent with the finish chunk', async () => {
    const text = sse(
      delta({ role: 'assistant', content: null, reasoning_content: '' }),
      delta({ reasoning_content: 'Think', content: null }),
      delta({ reasoning_content: 'ing.' }),
      delta({ content: 'Hi', reasoning_content: null }),
      delta({ content: '!' }),
      {
        ...delta({ content: '' }, 'stop'),
        usage: { prompt_tokens: 10, completion_tokens: 20, total_tokens: 30, completion_tokens_details: { reasoning_tokens: 12 } },
      },
      '[DONE]',
    );
    const { events, error } = await decodeText(chatStreamDecoder, text);
    expect(error).toBeUndefined();
    expect(events).toEqual([
      { type: 'start', id: 'chatcmpl-x', model: 'm', created: 1753120000 },
      { type: 'reasoning_delta', text: 'Think' },
      { type: 'reasoning_delta', text: 'ing.' },
      { type: 'text_delta', text: 'Hi' },
      { type: 'text_delta', text: '!' },
      { type: 'finish', reason: 'stop', usage: { input: 10, output: 20, reasoning: 12 } },
    ]);
  });

  it('maps length and refusal, and accepts a finish without [DONE]', async () => {
    const text = sse(delta({ role: 'assistant', refusal: "I can't" }), delta({ refusal: ' help.' }), delta({}, 'length'));
    const { events, error } = await decodeText(chatStreamDecoder, text);
    expect(error).toBeUndefined();
    expect(events.slice(1)).toEqual([
      { type: 'refusal_delta', text: "I can't" },
      { type: 'refusal_delta', text: ' help.' },
      { type: 'finish', reason: 'length' },
    ]);
  });

  it('throws the upstream error from a mid-stream error chunk, after the events before it', async () => {
    const { events, error } = await decodeText(chatStreamDecoder, fixture('chat-error-midstream.txt'));
    expect(events).toEqual([
      { type: 'start', id: 'chatcmpl-Err1', model: 'gpt-4o-mini-2024-07-18', created: 1753120200 },
      { type: 'text_delta', text: 'The answer' },
      { type: 'text_delta', text: ' is' },
    ]);
    expect(error).toBeInstanceOf(GatewayError);
    expect(error).toMatchObject({
      status: 502,
      type: 'server_error',
      message: 'The server had an error while processing your request. Sorry about that!',
    });
  });

  it('maps a rate limit error chunk to 429', async () => {
    const text = sse({ error: { message: 'Rate limit reached', type: 'tokens', code: 'rate_limit_exceeded', param: null } });
    const { events, error } = await decodeText(chatStreamDecoder, text);
    expect(events).toEqual([]);
    expect(error).toMatchObject({ status: 429, code: 'rate_limit_exceeded', message: 'Rate limit reached' });
  });

  it('never ends a cut stream as a success', async () => {
    const { events, error } = await decodeText(chatStreamDecoder, fixture('chat-cut.txt'));
    expect(events.map((e) => e.type)).toEqual(['start', 'text_delta', 'text_delta']);
    expect(events.some((e) => e.type === 'finish')).toBe(false);
    expect(error).toBeInstanceOf(GatewayError);
    expect(error).toMatchObject({ status: 502, code: 'upstream_stream_cut', message: 'upstream stream ended early' });
  });

  it('rejects an empty stream and invalid JSON with a 502', async () => {
    expect((await decodeText(chatStreamDecoder, '')).error).toMatchObject({ status: 502, code: 'upstream_stream_cut', message: 'upstream stream ended early' });
    expect((await decodeText(chatStreamDecoder, sse('[DONE]'))).error).toMatchObject({ status: 502 });
    const bad = await decodeText(chatStreamDecoder, sse(delta({ content: 'a' })) + 'data: {"choices":[\n\n');
    expect(bad.events.map((e) => e.type)).toEqual(['start', 'text_delta']);
    expect(bad.error).toMatchObject({ status: 502, type: 'upstream_error', code: 'upstream_invalid_response' });
  });
});
