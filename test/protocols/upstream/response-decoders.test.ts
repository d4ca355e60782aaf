import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../../src/errors.js';
import { decodeChatResponse } from '../../../src/protocols/chat/decode-response.js';
import { decodeMessagesResponse } from '../../../src/protocols/messages/decode-response.js';
import { decodeResponsesResponse } from '../../../src/protocols/responses/decode-response.js';
import { withoutRaw } from './helpers.js';

describe('decodeChatResponse', () => {
  const body = (message: Record<string, unknown>, finish = 'stop', usage: unknown = undefined) => ({
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1741569952,
    model: 'gpt-4.1-2025-04-14',
    choices: [{ index: 0, message: { role: 'assistant', refusal: null, annotations: [], ...message }, logprobs: null, finish_reason: finish }],
    usage,
  });

  it('decodes reasoning_content, text, parallel tool calls and usage', () => {
    const json = body(
      {
        content: 'Checking both.',
        reasoning_content: 'Two cities.',
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'w', arguments: '{"c":"Paris"}' } },
          { id: 'call_2', type: 'function', function: { name: 'w', arguments: '' } },
        ],
      },
      'tool_calls',
      {
        prompt_tokens: 19,
        completion_tokens: 10,
        total_tokens: 29,
        prompt_tokens_details: { cached_tokens: 3, audio_tokens: 0 },
        completion_tokens_details: { reasoning_tokens: 4 },
      },
    );
    expect(withoutRaw(decodeChatResponse(json))).toEqual({
      id: 'chatcmpl-1',
      model: 'gpt-4.1-2025-04-14',
      created: 1741569952,
      content: [
        { type: 'reasoning', text: 'Two cities.' },
        { type: 'text', text: 'Checking both.' },
        { type: 'tool_call', id: 'call_1', name: 'w', arguments: '{"c":"Paris"}' },
        { type: 'tool_call', id: 'call_2', name: 'w', arguments: '' },
      ],
      finishReason: 'tool_calls',
      usage: { input: 19, cachedRead: 3, output: 10, reasoning: 4 },
    });
  });

  it.each([
    ['length', 'length'],
    ['content_filter', 'content_filter'],
    ['function_call', 'tool_calls'],
    ['stop', 'stop'],
    [null, 'stop'],
  ])('maps finish_reason %s to %s', (finish, expected) => {
    expect(decodeChatResponse(body({ content: 'x' }, finish as string)).finishReason).toBe(expected);
  });

  it('reports a tool-call turn that an upstream ended with "stop" as tool_calls', () => {
    const json = body({ content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }] }, 'stop');
    expect(decodeChatResponse(json).finishReason).toBe('tool_calls');
  });

  it('decodes a refusal and leaves unknown usage undefined', () => {
    const decoded = decodeChatResponse(body({ content: null, refusal: "I can't help with that." }));
    expect(decoded.content).toEqual([{ type: 'refusal', refusal: "I can't help with that." }]);
    expect(withoutRaw(decoded).usage).toEqual({});
  });

  it.each([[null], ['text'], [{}], [{ choices: [] }], [{ choices: [{ index: 0 }] }]])('rejects malformed JSON %j with a 502', (json) => {
    expect(() => decodeChatResponse(json)).toThrow(GatewayError);
    expect(() => decodeChatResponse(json)).toThrow(
      expect.objectContaining({ status: 502, type: 'upstream_error', message: 'The upstream returned an invalid response', code: 'upstream_invalid_response' }),
    );
  });
});

describe('decodeResponsesResponse', () => {
  const response = (extra: Record<string, unknown>) => ({
    id: 'resp_1',
    object: 'response',
    created_at: 1753000000,
    model: 'gpt-5-2025-08-07',
    status: 'completed',
    error: null,
    incomplete_details: null,
    output: [],
    usage: {
      input_tokens: 100,
      input_tokens_details: { cached_tokens: 40 },
      output_tokens: 50,
      output_tokens_details: { reasoning_tokens: 30 },
      total_tokens: 150,
    },
    ...extra,
  });

  it('decodes reasoning, message and function_call items in order, with call_id as the tool id', () => {
    const json = response({
      output: [
        {
          id: 'rs_1',
          type: 'reasoning',
          summary: [
            { type: 'summary_text', text: 'A' },
            { type: 'summary_text', text: 'B' },
          ],
          encrypted_content: 'enc',
        },
        { id: 'msg_1', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Let me look.', annotations: [] }] },
        { id: 'fc_1', type: 'function_call', call_id: 'call_1', name: 'search', arguments: '{"q":"x"}', status: 'completed' },
        { id: 'ws_1', type: 'web_search_call', status: 'completed' },
      ],
    });
    expect(withoutRaw(decodeResponsesResponse(json))).toEqual({
      id: 'resp_1',
      model: 'gpt-5-2025-08-07',
      created: 1753000000,
      content: [
        { type: 'reasoning', text: 'A\n\nB', encrypted: 'enc', id: 'rs_1' },
        { type: 'text', text: 'Let me look.' },
        { type: 'tool_call', id: 'call_1', name: 'search', arguments: '{"q":"x"}' },
      ],
      finishReason: 'tool_calls',
      usage: { input: 100, cachedRead: 40, output: 50, reasoning: 30 },
    });
  });

  it('maps incomplete details and refusals', () => {
    const refusal = { id: 'msg_1', type: 'message', role: 'assistant', content: [{ type: 'refusal', refusal: 'No.' }] };
    const filtered = decodeResponsesResponse(response({ status: 'incomplete', incomplete_details: { reason: 'content_filter' }, output: [refusal] }));
    expect(filtered.finishReason).toBe('content_filter');
    expect(filtered.content).toEqual([{ type: 'refusal', refusal: 'No.' }]);
    expect(decodeResponsesResponse(response({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } })).finishReason).toBe('length');
    expect(decodeResponsesResponse(response({})).finishReason).toBe('stop');
  });

  it('throws a failed response as a GatewayError with its message', () => {
    const json = response({ status: 'failed', error: { code: 'rate_limit_exceeded', message: 'Too many requests' } });
    expect(() => decodeResponsesResponse(json)).toThrow(expect.objectContaining({ status: 429, message: 'Too many requests', code: 'rate_limit_exceeded' }));
    const server = response({ status: 'failed', error: { code: 'server_error', message: 'Boom' } });
    expect(() => decodeResponsesResponse(server)).toThrow(expect.objectContaining({ status: 502, message: 'Boom' }));
  });

  it('rejects malformed or unfinished responses with a 502', () => {
    expect(() => decodeResponsesResponse({ id: 'resp_1' })).toThrow(
      expect.objectContaining({ status: 502, message: 'The upstream returned an invalid response', code: 'upstream_invalid_response' }),
    );
    expect(() => decodeResponsesResponse(response({ status: 'queued' }))).toThrow(expect.objectContaining({ status: 502 }));
  });
});

describe('decodeMessagesResponse', () => {
  const message = (extra: Record<string, unknown>) => ({
    id: 'msg_01',
    type: 'message',
    role: 'assistant',
    model: 'claude-sonnet-4-5',
    content: [],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: {
      input_tokens: 12,
      output_tokens: 30,
      cache_creation_input_tokens: 100,
      cache_read_input_tokens: 1000,
      output_tokens_details: { thinking_tokens: 20 },
    },
    ...extra,
  });

  it('decodes thinking, redacted thinking, text and tool_use in order, with prompt-including-cache usage', () => {
    const decoded = withoutRaw(
      decodeMessagesResponse(
        message({
          content: [
            { type: 'thinking', thinking: 'Hmm.', signature: 'sig' },
            { type: 'redacted_thinking', data: 'opaque' },
            { type: 'text', text: 'Checking.', citations: null },
            { type: 'tool_use', id: 'toolu_01', name: 'get_weather', input: { city: 'Paris' } },
            { type: 'tool_use', id: 'toolu_02', name: 'now', input: {} },
          ],
          stop_reason: 'tool_use',
        }),
      ),
    );
    expect(decoded).toEqual({
      id: 'msg_01',
      model: 'claude-sonnet-4-5',
      created: decoded.created,
      content: [
        { type: 'reasoning', text: 'Hmm.', signature: 'sig' },
        { type: 'reasoning', text: '', redacted: 'opaque' },
        { type: 'text', text: 'Checking.' },
        { type: 'tool_call', id: 'toolu_01', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { type: 'tool_call', id: 'toolu_02', name: 'now', arguments: '{}' },
      ],
      finishReason: 'tool_calls',
      usage: { input: 1112, cachedRead: 1000, cacheWrite: 100, output: 30, reasoning: 20 },
    });
    expect(Number.isInteger(decoded.created)).toBe(true);
  });

  it.each([
    ['end_turn', 'stop'],
    ['max_tokens', 'length'],
    ['model_context_window_exceeded', 'length'],
    ['pause_turn', 'pause'],
    ['refusal', 'content_filter'],
    ['tool_use', 'tool_calls'],
  ])('maps stop_reason %s to %s', (stop, expected) => {
    expect(decodeMessagesResponse(message({ stop_reason: stop })).finishReason).toBe(expected);
  });

  it('keeps the stop sequence', () => {
    const decoded = decodeMessagesResponse(message({ stop_reason: 'stop_sequence', stop_sequence: '###', content: [{ type: 'text', text: 'a' }] }));
    expect(decoded.finishReason).toBe('stop_sequence');
    expect(decoded.stopSequence).toBe('###');
  });

  it('rejects a body without content with a 502', () => {
    expect(() => decodeMessagesResponse({ type: 'message' })).toThrow(
      expect.objectContaining({ status: 502, message: 'The upstream returned an invalid response', code: 'upstream_invalid_response' }),
    );
  });
});
