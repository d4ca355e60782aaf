import type { UpstreamKind } from '../upstreams/harness.js';

/**
 * Minimal but valid upstream answers of each upstream protocol, as bytes a raw upstream can
 * send and then break: a text answer in a few deltas with usage, the protocol's in-stream error
 * and its error body.
 */

export const USAGE = { input: 11, output: 7 };

const sseData = (json: unknown) => `data: ${JSON.stringify(json)}\n\n`;
const sseEvent = (type: string, json: unknown) => `event: ${type}\ndata: ${JSON.stringify(json)}\n\n`;

/** The frames of a complete streamed text answer, its terminal event last. */
export function streamFrames(kind: UpstreamKind, texts: readonly string[]): string[] {
  const text = texts.join('');
  if (kind === 'chat') {
    const chunk = (delta: unknown, finish: string | null = null) =>
      sseData({
        id: 'chatcmpl-raw',
        object: 'chat.completion.chunk',
        created: 1753120000,
        model: 'gpt-4.1',
        choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
      });
    return [
      chunk({ role: 'assistant', content: '' }),
      ...texts.map((piece) => chunk({ content: piece })),
      chunk({}, 'stop'),
      sseData({
        id: 'chatcmpl-raw',
        object: 'chat.completion.chunk',
        created: 1753120000,
        model: 'gpt-4.1',
        choices: [],
        usage: { prompt_tokens: USAGE.input, completion_tokens: USAGE.output, total_tokens: USAGE.input + USAGE.output },
      }),
      'data: [DONE]\n\n',
    ];
  }
  if (kind === 'responses') {
    let sequence = 0;
    const frame = (event: Record<string, unknown>) => sseEvent(event.type as string, { ...event, sequence_number: sequence++ });
    const response = (status: string, output: unknown[], usage: unknown) => ({
      id: 'resp_raw',
      object: 'response',
      created_at: 1753120000,
      status,
      model: 'gpt-5',
      output,
      error: null,
      incomplete_details: null,
      usage,
    });
    const part = { type: 'output_text', text, annotations: [] };
    const item = { id: 'msg_raw', type: 'message', status: 'completed', role: 'assistant', content: [part] };
    const ref = { item_id: 'msg_raw', output_index: 0, content_index: 0 };
    return [
      frame({ type: 'response.created', response: response('in_progress', [], null) }),
      frame({ type: 'response.output_item.added', output_index: 0, item: { ...item, status: 'in_progress', content: [] } }),
      frame({ type: 'response.content_part.added', ...ref, part: { ...part, text: '' } }),
      ...texts.map((delta) => frame({ type: 'response.output_text.delta', ...ref, delta })),
      frame({ type: 'response.output_text.done', ...ref, text }),
      frame({ type: 'response.content_part.done', ...ref, part }),
      frame({ type: 'response.output_item.done', output_index: 0, item }),
      frame({
        type: 'response.completed',
        response: response('completed', [item], {
          input_tokens: USAGE.input,
          input_tokens_details: { cached_tokens: 0 },
          output_tokens: USAGE.output,
          output_tokens_details: { reasoning_tokens: 0 },
          total_tokens: USAGE.input + USAGE.output,
        }),
      }),
    ];
  }
  return [
    sseEvent('message_start', {
      type: 'message_start',
      message: {
        id: 'msg_raw',
        type: 'message',
        role: 'assistant',
        model: 'claude-sonnet-4-5',
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: USAGE.input, output_tokens: 1 },
      },
    }),
    sseEvent('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
    ...texts.map((piece) => sseEvent('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: piece } })),
    sseEvent('content_block_stop', { type: 'content_block_stop', index: 0 }),
    sseEvent('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: USAGE.output } }),
    sseEvent('message_stop', { type: 'message_stop' }),
  ];
}

/** How many frames of `streamFrames` come before the first text delta. */
export const BEFORE_TEXT: Record<UpstreamKind, number> = { chat: 1, responses: 3, anthropic: 2 };

/** A complete JSON answer. */
export function jsonAnswer(kind: UpstreamKind, text: string): Record<string, unknown> {
  if (kind === 'chat') {
    return {
      id: 'chatcmpl-raw',
      object: 'chat.completion',
      created: 1753120000,
      model: 'gpt-4.1',
      choices: [{ index: 0, message: { role: 'assistant', content: text, refusal: null }, logprobs: null, finish_reason: 'stop' }],
      usage: { prompt_tokens: USAGE.input, completion_tokens: USAGE.output, total_tokens: USAGE.input + USAGE.output },
    };
  }
  if (kind === 'responses') {
    return {
      id: 'resp_raw',
      object: 'response',
      created_at: 1753120000,
      status: 'completed',
      model: 'gpt-5',
      error: null,
      incomplete_details: null,
      output: [{ id: 'msg_raw', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] }],
      usage: {
        input_tokens: USAGE.input,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: USAGE.output,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: USAGE.input + USAGE.output,
      },
    };
  }
  return {
    id: 'msg_raw',
    type: 'message',
    role: 'assistant',
    model: 'claude-sonnet-4-5',
    content: [{ type: 'text', text }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: USAGE.input, output_tokens: USAGE.output },
  };
}

/** The protocol's error event inside a stream. */
export function streamErrorFrame(kind: UpstreamKind, message: string): string {
  if (kind === 'chat') return sseData({ error: { message, type: 'server_error', param: null, code: null } });
  if (kind === 'responses')
    return sseEvent('error', { type: 'error', sequence_number: 99, error: { type: 'server_error', code: 'server_error', message, param: null } });
  return sseEvent('error', { type: 'error', error: { type: 'api_error', message } });
}

/** The protocol's error body. */
export function errorBody(kind: UpstreamKind, message: string, type = 'server_error'): Record<string, unknown> {
  if (kind === 'anthropic') return { type: 'error', error: { type: type === 'server_error' ? 'api_error' : type, message } };
  return { error: { message, type, param: null, code: null } };
}

/** The upstream kind a raw upstream request was meant for, from its path. */
export function kindOfPath(path: string): UpstreamKind {
  if (path.endsWith('/chat/completions')) return 'chat';
  if (path.endsWith('/responses')) return 'responses';
  return 'anthropic';
}
