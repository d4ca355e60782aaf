import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../../src/errors.js';
import { responsesStreamDecoder } from '../../../src/protocols/responses/decode-stream.js';
import { decodeText, fixture } from './helpers.js';

let seq = 0;
const ev = (event: Record<string, unknown>): string => `event: ${String(event.type)}\ndata: ${JSON.stringify({ ...event, sequence_number: seq++ })}\n\n`;
const response = (extra: Record<string, unknown> = {}) => ({
  id: 'resp_1',
  object: 'response',
  created_at: 1753000000,
  model: 'gpt-5-mini',
  status: 'in_progress',
  output: [],
  usage: null,
  ...extra,
});

describe('responsesStreamDecoder', () => {
  it('decodes reasoning (summary parts, encrypted content) then a function call', async () => {
    const { events, error } = await decodeText(responsesStreamDecoder, fixture('responses-reasoning-tool.txt'), 31);
    expect(error).toBeUndefined();
    expect(events).toEqual([
      { type: 'start', id: 'resp_68a1c0ffee', model: 'gpt-5-2025-08-07', created: 1753120400 },
      // The item's id on each: its encrypted content is bound to it.
      { type: 'reasoning_delta', text: '**Checking weather**\n\n', id: 'rs_68a1c1' },
      { type: 'reasoning_delta', text: 'The user wants Paris weather.', id: 'rs_68a1c1' },
      { type: 'reasoning_delta', text: '\n\n', id: 'rs_68a1c1' },
      { type: 'reasoning_delta', text: "I'll call the tool.", id: 'rs_68a1c1' },
      { type: 'reasoning_end', encrypted: 'gAAAAABoEnc-RyPtEd==', id: 'rs_68a1c1' },
      { type: 'tool_call_start', id: 'call_9zQeM4', name: 'get_weather' },
      { type: 'tool_call_delta', arguments: '{"' },
      { type: 'tool_call_delta', arguments: 'city' },
      { type: 'tool_call_delta', arguments: '":"' },
      { type: 'tool_call_delta', arguments: 'Paris' },
      { type: 'tool_call_delta', arguments: '"}' },
      { type: 'finish', reason: 'tool_calls', usage: { input: 312, cachedRead: 128, output: 190, reasoning: 128 } },
    ]);
  });

  it('decodes text and refusal deltas and a completed response', async () => {
    const text = [
      ev({ type: 'response.created', response: response() }),
      ev({ type: 'response.in_progress', response: response() }),
      ev({
        type: 'response.output_item.added',
        output_index: 0,
        item: { id: 'msg_1', type: 'message', status: 'in_progress', role: 'assistant', content: [] },
      }),
      ev({
        type: 'response.content_part.added',
        item_id: 'msg_1',
        output_index: 0,
        content_index: 0,
        part: { type: 'output_text', text: '', annotations: [] },
      }),
      ev({ type: 'response.output_text.delta', item_id: 'msg_1', output_index: 0, content_index: 0, delta: 'Hel', logprobs: [] }),
      ev({ type: 'response.output_text.delta', item_id: 'msg_1', output_index: 0, content_index: 0, delta: 'lo', logprobs: [] }),
      ev({ type: 'response.output_text.done', item_id: 'msg_1', output_index: 0, content_index: 0, text: 'Hello', logprobs: [] }),
      ev({ type: 'response.refusal.delta', item_id: 'msg_1', output_index: 0, content_index: 1, delta: 'No.' }),
      ev({
        type: 'response.output_item.done',
        output_index: 0,
        item: {
          id: 'msg_1',
          type: 'message',
          status: 'completed',
          role: 'assistant',
          content: [
            { type: 'output_text', text: 'Hello', annotations: [] },
            { type: 'refusal', refusal: 'No.' },
          ],
        },
      }),
      ev({
        type: 'response.completed',
        response: response({
          status: 'completed',
          usage: {
            input_tokens: 5,
            output_tokens: 2,
            input_tokens_details: { cached_tokens: 0 },
            output_tokens_details: { reasoning_tokens: 0 },
            total_tokens: 7,
          },
        }),
      }),
    ].join('');
    const { events, error } = await decodeText(responsesStreamDecoder, text);
    expect(error).toBeUndefined();
    expect(events).toEqual([
      { type: 'start', id: 'resp_1', model: 'gpt-5-mini', created: 1753000000 },
      { type: 'text_delta', text: 'Hel' },
      { type: 'text_delta', text: 'lo' },
      { type: 'refusal_delta', text: 'No.' },
      { type: 'finish', reason: 'stop', usage: { input: 5, cachedRead: 0, output: 2, reasoning: 0 } },
    ]);
  });

  it('emits arguments and text that only arrive in .done events once, and maps incomplete to length', async () => {
    const fc = { id: 'fc_1', type: 'function_call', call_id: 'call_1', name: 'f', arguments: '' };
    const text = [
      ev({ type: 'response.created', response: response() }),
      ev({ type: 'response.output_item.added', output_index: 0, item: fc }),
      ev({ type: 'response.function_call_arguments.done', item_id: 'fc_1', output_index: 0, arguments: '{"a":1}' }),
      ev({ type: 'response.output_item.done', output_index: 0, item: { ...fc, status: 'completed', arguments: '{"a":1}' } }),
      ev({
        type: 'response.output_item.done',
        output_index: 1,
        item: { id: 'msg_2', type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Partial' }] },
      }),
      ev({ type: 'response.incomplete', response: response({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } }) }),
    ].join('');
    const { events, error } = await decodeText(responsesStreamDecoder, text);
    expect(error).toBeUndefined();
    expect(events.slice(1)).toEqual([
      { type: 'tool_call_start', id: 'call_1', name: 'f' },
      { type: 'tool_call_delta', arguments: '{"a":1}' },
      { type: 'text_delta', text: 'Partial' },
      { type: 'finish', reason: 'length' },
    ]);
  });

  it('decodes the output of a stream that only sends the terminal event', async () => {
    const output = [
      { id: 'rs_1', type: 'reasoning', summary: [{ type: 'summary_text', text: 'Hmm' }] },
      { id: 'msg_1', type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Done' }] },
    ];
    const text = ev({ type: 'response.completed', response: response({ status: 'completed', output }) });
    const { events, error } = await decodeText(responsesStreamDecoder, text);
    expect(error).toBeUndefined();
    expect(events).toEqual([
      { type: 'start', id: 'resp_1', model: 'gpt-5-mini', created: 1753000000 },
      { type: 'reasoning_delta', text: 'Hmm', id: 'rs_1' },
      { type: 'text_delta', text: 'Done' },
      { type: 'finish', reason: 'stop' },
    ]);
  });

  it('throws the error event (insufficient_quota → 429, no retry)', async () => {
    const { events, error } = await decodeText(responsesStreamDecoder, fixture('responses-error.txt'));
    expect(events).toEqual([{ type: 'start', id: 'resp_quota1', model: 'gpt-5-2025-08-07', created: 1753120400 }]);
    expect(error).toBeInstanceOf(GatewayError);
    expect(error).toMatchObject({
      status: 429,
      code: 'insufficient_quota',
      message: 'You exceeded your current quota, please check your plan and billing details.',
      headers: { 'x-should-retry': 'false' },
    });
  });

  it('throws on response.failed with the response error', async () => {
    const text = [
      ev({ type: 'response.created', response: response() }),
      ev({ type: 'response.failed', response: response({ status: 'failed', error: { code: 'server_error', message: 'Something broke' } }) }),
    ].join('');
    const { error } = await decodeText(responsesStreamDecoder, text);
    expect(error).toMatchObject({ status: 502, code: 'server_error', message: 'Something broke' });
  });

  it('throws 502 when the stream is cut before a terminal event', async () => {
    const { events, error } = await decodeText(responsesStreamDecoder, fixture('responses-cut.txt'));
    expect(events).toEqual([
      { type: 'start', id: 'resp_cut1', model: 'gpt-5-2025-08-07', created: 1753120400 },
      { type: 'text_delta', text: 'Hel' },
    ]);
    expect(error).toMatchObject({ status: 502, code: 'upstream_stream_cut', message: 'upstream stream ended early' });
    // A [DONE] without a terminal event is still a cut stream.
    const done = await decodeText(responsesStreamDecoder, fixture('responses-cut.txt') + 'data: [DONE]\n\n');
    expect(done.error).toMatchObject({ status: 502, code: 'upstream_stream_cut', message: 'upstream stream ended early' });
  });
});
