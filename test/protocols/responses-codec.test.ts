import { APIError } from 'openai';
import { describe, expect, it } from 'vitest';
import { GatewayError, type GatewayError as GatewayErrorType } from '../../src/errors.js';
import type { IRResponse, IRStreamEvent } from '../../src/protocols/ir.js';
import { decodeResponsesRequest } from '../../src/protocols/responses/decode-request.js';
import { encodeResponsesResponse } from '../../src/protocols/responses/encode-response.js';
import { encodeResponsesStream } from '../../src/protocols/responses/encode-stream.js';
import { checkResponsesStream, collect, irStream, jsonBody, makeCtx, openaiWith, sseBody } from './helpers.js';

function decode(body: Record<string, unknown>) {
  return decodeResponsesRequest({ model: 'public-model', ...body }, 'upstream-model');
}

function decodeError(body: Record<string, unknown>): GatewayErrorType {
  try {
    decode(body);
  } catch (error) {
    expect(error).toBeInstanceOf(GatewayError);
    return error as GatewayErrorType;
  }
  throw new Error('expected a 400');
}

describe('decodeResponsesRequest', () => {
  it('turns a string input into one user message and instructions into system', () => {
    const ir = decode({ input: 'hello', instructions: 'be nice' });
    expect(ir.system).toEqual([{ type: 'text', text: 'be nice' }]);
    expect(ir.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'hello' }] }]);
    expect(ir.stream).toBe(false);
    expect(ir.passthrough).toEqual({});
  });

  it('maps input items, merging one assistant turn', () => {
    const ir = decode({
      instructions: 'sys',
      input: [
        { role: 'developer', content: 'dev' },
        {
          type: 'message',
          role: 'user',
          content: [
            { type: 'input_text', text: 'see' },
            { type: 'input_image', image_url: 'https://x.test/i.png', detail: 'original' },
            { type: 'input_file', file_data: 'data:application/pdf;base64,JVBE', filename: 'f.pdf' },
            { type: 'input_file', file_id: 'file_1' },
          ],
        },
        { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'a' }, { type: 'summary_text', text: 'b' }], encrypted_content: 'ENC' },
        { type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'I will call', annotations: [] }] },
        { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'f', arguments: '{"x":1}' },
        { type: 'function_call', id: 'fc_2', call_id: 'call_2', name: 'g', arguments: '' },
        { type: 'function_call_output', call_id: 'call_1', output: 'one' },
        { type: 'function_call_output', call_id: 'call_2', output: [{ type: 'input_text', text: 'two' }, { type: 'input_image', image_url: 'data:image/jpeg;base64,QUJD' }] },
        { role: 'system', content: [{ type: 'input_text', text: 'later' }] },
        { role: 'assistant', content: 'plain' },
      ],
    });
    expect(ir.system).toEqual([
      { type: 'text', text: 'sys' },
      { type: 'text', text: 'dev' },
    ]);
    expect(ir.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'see' },
          { type: 'image', url: 'https://x.test/i.png', detail: 'high' },
          { type: 'file', data: 'JVBE', mediaType: 'application/pdf', filename: 'f.pdf' },
          { type: 'file', fileId: 'file_1' },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'a\n\nb', id: 'rs_1', encrypted: 'ENC' },
          { type: 'text', text: 'I will call' },
          { type: 'tool_call', id: 'call_1', name: 'f', arguments: '{"x":1}' },
          { type: 'tool_call', id: 'call_2', name: 'g', arguments: '' },
        ],
      },
      { role: 'tool', toolCallId: 'call_1', content: [{ type: 'text', text: 'one' }] },
      {
        role: 'tool',
        toolCallId: 'call_2',
        content: [
          { type: 'text', text: 'two' },
          { type: 'image', data: 'QUJD', mediaType: 'image/jpeg' },
        ],
      },
      { role: 'system', content: [{ type: 'text', text: 'later' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'plain' }] },
    ]);
  });

  it('maps tools and options', () => {
    const ir = decode({
      input: 'x',
      tools: [{ type: 'function', name: 'f', description: 'd', parameters: { type: 'object' }, strict: false }],
      tool_choice: { type: 'function', name: 'f' },
      parallel_tool_calls: true,
      max_output_tokens: 64,
      temperature: 0.2,
      top_p: 0.8,
      reasoning: { effort: 'low', summary: 'auto' },
      text: { format: { type: 'json_schema', name: 'out', schema: { type: 'object' }, strict: true }, verbosity: 'high' },
      metadata: { a: 'b' },
      user: 'u',
      stream: true,
      stream_options: { include_obfuscation: false },
      truncation: 'disabled',
      background: false,
      store: false,
      include: ['reasoning.encrypted_content'],
      prompt_cache_key: 'k',
      prompt_cache_retention: '24h',
      service_tier: 'priority',
      safety_identifier: 's',
    });
    expect(ir.tools).toEqual([{ name: 'f', description: 'd', parameters: { type: 'object' }, strict: false }]);
    expect(ir.toolChoice).toEqual({ type: 'tool', name: 'f', parallel: true });
    expect(ir.parallelToolCalls).toBe(true);
    expect(ir.maxOutputTokens).toBe(64);
    expect(ir.temperature).toBe(0.2);
    expect(ir.topP).toBe(0.8);
    expect(ir.reasoning).toEqual({ effort: 'low', summary: 'auto' });
    expect(ir.responseFormat).toEqual({ type: 'json_schema', name: 'out', schema: { type: 'object' }, strict: true });
    expect(ir.metadata).toEqual({ a: 'b' });
    expect(ir.user).toBe('u');
    expect(ir.stream).toBe(true);
    expect(ir.passthrough).toEqual({
      store: false,
      include: ['reasoning.encrypted_content'],
      prompt_cache_key: 'k',
      prompt_cache_retention: '24h',
      service_tier: 'priority',
      safety_identifier: 's',
      verbosity: 'high',
    });
  });

  it.each([
    [{ previous_response_id: 'resp_1' }, 'previous_response_id'],
    [{ conversation: 'conv_1' }, 'conversation'],
    [{ background: true }, 'background'],
    [{ prompt: { id: 'pmpt_1' } }, 'prompt'],
    [{ truncation: 'auto' }, 'truncation'],
    [{ context_management: [{ type: 'compaction' }] }, 'context_management'],
    [{ top_logprobs: 2 }, 'top_logprobs'],
    [{ include: ['message.output_text.logprobs'] }, 'include[0]'],
    [{ input: [{ type: 'item_reference', id: 'msg_1' }] }, 'input[0].type'],
    [{ input: [{ type: 'computer_call', id: 'cu_1' }] }, 'input[0].type'],
    [{ input: [{ role: 'user', content: [{ type: 'input_image', file_id: 'file_1' }] }] }, 'input[0].content[0].file_id'],
    [{ input: [{ role: 'user', content: [{ type: 'input_audio', input_audio: {} }] }] }, 'input[0].content[0].type'],
    [{ input: [{ role: 'system', content: [{ type: 'input_image', image_url: 'https://x' }] }] }, 'input[0].content[0].type'],
    [{ input: [{ type: 'function_call', name: 'f', arguments: '{}' }] }, 'input[0].call_id'],
    [{ tools: [{ type: 'function', name: 'f' }, { type: 'computer_use_sandbox' }] }, 'tools[1].type'],
    [{ tools: [{ type: 'web_search' }], tool_choice: 'required' }, 'tool_choice'],
    [{ tools: [{ type: 'namespace', name: 'n', tools: [{ type: 'web_search' }] }] }, 'tools[0].tools[0].type'],
    [{ tools: [{ type: 'custom', name: 'c', format: { type: 'json' } }] }, 'tools[0].format.type'],
    [{ tool_choice: { type: 'web_search_preview' } }, 'tool_choice.type'],
    [{ tool_choice: { type: 'allowed_tools', mode: 'auto', tools: [] } }, 'tool_choice.type'],
    [{ text: { format: { type: 'grammar' } } }, 'text.format.type'],
    [{ input: 42 }, 'input'],
  ])('rejects %j naming %s', (body, param) => {
    const error = decodeError({ input: 'x', ...body });
    expect(error.status).toBe(400);
    expect(error.param).toBe(param);
  });
});

const usage = { input: 200, cachedRead: 150, cacheWrite: 5, output: 40, reasoning: 16 };

describe('encodeResponsesResponse', () => {
  const response: IRResponse = {
    id: 'chatcmpl-xyz',
    model: 'upstream',
    created: 1700000000,
    content: [
      { type: 'reasoning', text: 'thought', encrypted: 'ENC' },
      { type: 'text', text: 'Hello ' },
      { type: 'text', text: 'world' },
      { type: 'tool_call', id: 'call_1', name: 'f', arguments: '{"a":1}' },
      { type: 'text', text: '!' },
    ],
    finishReason: 'tool_calls',
    usage,
  };
  const request = { model: 'public-model', input: 'x', instructions: 'sys', temperature: 0.3, tools: [{ type: 'function', name: 'f' }] };

  it('builds a Response the SDK reads back (output_text computed by the SDK)', async () => {
    const body = encodeResponsesResponse(response, makeCtx(request));
    expect('output_text' in body).toBe(false);
    const result = await openaiWith(jsonBody(body)).responses.create({ model: 'm', input: 'x' });
    expect(result.id).toBe('resp_xyz');
    expect(result.object).toBe('response');
    expect(result.status).toBe('completed');
    expect(result.model).toBe('public-model');
    expect(result.created_at).toBe(1700000000);
    expect(result.completed_at).toBeTypeOf('number');
    expect(result.error).toBeNull();
    expect(result.incomplete_details).toBeNull();
    expect(result.output_text).toBe('Hello world!');
    expect(result.output.map((item) => item.type)).toEqual(['reasoning', 'message', 'function_call', 'message']);
    const [reasoning, message, call] = result.output as any[];
    expect(reasoning.id).toMatch(/^rs_/);
    expect(reasoning.summary).toEqual([{ type: 'summary_text', text: 'thought' }]);
    expect(reasoning.encrypted_content).toBe('ENC');
    expect(message.id).toMatch(/^msg_/);
    expect(message.content).toEqual([
      { type: 'output_text', text: 'Hello ', annotations: [], logprobs: [] },
      { type: 'output_text', text: 'world', annotations: [], logprobs: [] },
    ]);
    expect(call).toMatchObject({ type: 'function_call', call_id: 'call_1', name: 'f', arguments: '{"a":1}', status: 'completed' });
    expect(call.id).toMatch(/^fc_/);
    expect(result.usage).toEqual({
      input_tokens: 200,
      input_tokens_details: { cached_tokens: 150, cache_write_tokens: 5 },
      output_tokens: 40,
      output_tokens_details: { reasoning_tokens: 16 },
      total_tokens: 240,
    });
    // Echoed configuration, with the API's defaults where the client set nothing.
    expect(result).toMatchObject({
      instructions: 'sys',
      temperature: 0.3,
      top_p: 1,
      tools: [{ type: 'function', name: 'f' }],
      tool_choice: 'auto',
      parallel_tool_calls: true,
      metadata: {},
      max_output_tokens: null,
      previous_response_id: null,
      reasoning: { effort: null, summary: null },
      text: { format: { type: 'text' }, verbosity: 'medium' },
      truncation: 'disabled',
      store: true,
    });
  });

  it('reports length as incomplete with the last item incomplete', () => {
    const body = encodeResponsesResponse(
      { ...response, content: [{ type: 'text', text: 'cut' }], finishReason: 'length' },
      makeCtx(request),
    ) as any;
    expect(body.status).toBe('incomplete');
    expect(body.incomplete_details).toEqual({ reason: 'max_output_tokens' });
    expect(body.completed_at).toBeNull();
    expect(body.output[0].status).toBe('incomplete');
  });

  it('reports content_filter as incomplete, and a refusal as a refusal part', () => {
    const body = encodeResponsesResponse(
      { ...response, content: [{ type: 'refusal', refusal: 'no' }], finishReason: 'content_filter' },
      makeCtx(request),
    ) as any;
    expect(body.incomplete_details).toEqual({ reason: 'content_filter' });
    expect(body.output[0].content).toEqual([{ type: 'refusal', refusal: 'no' }]);
  });

  it('carries an Anthropic signature through encrypted_content and back', () => {
    const body = encodeResponsesResponse(
      { ...response, content: [{ type: 'reasoning', text: 'hm', signature: 'SIG' }], finishReason: 'stop' },
      makeCtx(request),
    ) as any;
    const item = body.output[0];
    expect(item.encrypted_content).toBeTypeOf('string');
    const ir = decode({ input: [item, { role: 'user', content: 'next' }] });
    expect(ir.messages[0]).toEqual({ role: 'assistant', content: [{ type: 'reasoning', text: 'hm', id: item.id, signature: 'SIG' }] });
  });
});

const start: IRStreamEvent = { type: 'start', id: 'resp_up', model: 'upstream', created: 1700000002, usage: { input: 200, cachedRead: 150 } };
const request = { model: 'public-model', input: 'x', stream: true, instructions: 'sys' };

async function streamThroughSdk(events: IRStreamEvent[], fail?: unknown) {
  const errors: GatewayErrorType[] = [];
  const text = await collect(encodeResponsesStream(irStream(events, fail), makeCtx(request, errors)));
  const stream = openaiWith(sseBody(text)).responses.stream({ model: 'm', input: 'x' });
  const seen: string[] = [];
  stream.on('event', (event) => seen.push(event.type));
  return { text, stream, errors, seen };
}

describe('encodeResponsesStream through the OpenAI SDK', () => {
  it('streams text in several deltas', async () => {
    const { text, stream } = await streamThroughSdk([
      start,
      { type: 'text_delta', text: 'Hel' },
      { type: 'text_delta', text: 'lo' },
      { type: 'text_delta', text: '!' },
      { type: 'finish', reason: 'stop', usage: { output: 3 } },
    ]);
    const events = checkResponsesStream(text);
    expect(events.map((e) => e.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(events[0]!.response).toMatchObject({ status: 'in_progress', output: [], usage: null, instructions: 'sys' });
    const final = await stream.finalResponse();
    expect(final.id).toBe('resp_up');
    expect(final.status).toBe('completed');
    expect(final.output_text).toBe('Hello!');
    expect(final.usage).toEqual({
      input_tokens: 200,
      input_tokens_details: { cached_tokens: 150, cache_write_tokens: 0 },
      output_tokens: 3,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 203,
    });
  });

  it('streams reasoning then text as two items', async () => {
    const { text, stream } = await streamThroughSdk([
      start,
      { type: 'reasoning_delta', text: 'think ' },
      { type: 'reasoning_delta', text: 'hard' },
      { type: 'reasoning_end', encrypted: 'ENC' },
      { type: 'text_delta', text: 'Done' },
      { type: 'finish', reason: 'stop', usage: { output: 10, reasoning: 6 } },
    ]);
    checkResponsesStream(text);
    const final = await stream.finalResponse();
    expect(final.output.map((i) => i.type)).toEqual(['reasoning', 'message']);
    const reasoning = final.output[0] as any;
    expect(reasoning.summary).toEqual([{ type: 'summary_text', text: 'think hard' }]);
    expect(reasoning.encrypted_content).toBe('ENC');
    expect(final.output_text).toBe('Done');
    expect(final.usage?.output_tokens_details.reasoning_tokens).toBe(6);
  });

  it('streams text then two tool calls', async () => {
    const { text, stream } = await streamThroughSdk([
      start,
      { type: 'text_delta', text: 'Let me check.' },
      { type: 'tool_call_start', id: 'call_a', name: 'weather' },
      { type: 'tool_call_delta', arguments: '{"city"' },
      { type: 'tool_call_delta', arguments: ':"Paris"}' },
      { type: 'tool_call_start', id: 'toolu_b', name: 'time' },
      { type: 'finish', reason: 'tool_calls', usage: { output: 30 } },
    ]);
    const events = checkResponsesStream(text);
    expect(events.filter((e) => e.type === 'response.output_item.added').map((e) => e.output_index)).toEqual([0, 1, 2]);
    const final = await stream.finalResponse();
    expect(final.status).toBe('completed');
    expect(final.output_text).toBe('Let me check.');
    const calls = final.output.filter((i) => i.type === 'function_call') as any[];
    expect(calls.map(({ call_id, name, arguments: args, status }) => ({ call_id, name, args, status }))).toEqual([
      { call_id: 'call_a', name: 'weather', args: '{"city":"Paris"}', status: 'completed' },
      { call_id: 'toolu_b', name: 'time', args: '', status: 'completed' },
    ]);
    expect(new Set(calls.map((c) => c.id)).size).toBe(2);
  });

  it('streams a tool call only, at output_index 0', async () => {
    const { text, stream } = await streamThroughSdk([
      start,
      { type: 'tool_call_start', id: 'call_only', name: 'f' },
      { type: 'tool_call_delta', arguments: '{}' },
      { type: 'finish', reason: 'tool_calls' },
    ]);
    const events = checkResponsesStream(text);
    expect(events[2]).toMatchObject({ type: 'response.output_item.added', output_index: 0, item: { type: 'function_call', call_id: 'call_only' } });
    const final = await stream.finalResponse();
    expect(final.output).toHaveLength(1);
    expect(final.output_text).toBe('');
  });

  it('ends a length finish with response.incomplete', async () => {
    const { text, stream } = await streamThroughSdk([
      start,
      { type: 'text_delta', text: 'trunc' },
      { type: 'finish', reason: 'length', usage: { output: 1 } },
    ]);
    const events = checkResponsesStream(text);
    expect(events.at(-1)!.type).toBe('response.incomplete');
    const final = await stream.finalResponse();
    expect(final.status).toBe('incomplete');
    expect(final.incomplete_details).toEqual({ reason: 'max_output_tokens' });
    expect((final.output[0] as any).status).toBe('incomplete');
    expect(final.output_text).toBe('trunc');
  });

  it('closes a text part before a refusal part in the same message', async () => {
    const { text, stream } = await streamThroughSdk([
      start,
      { type: 'text_delta', text: 'Sorry, ' },
      { type: 'refusal_delta', text: 'I cannot' },
      { type: 'finish', reason: 'stop' },
    ]);
    checkResponsesStream(text);
    const final = await stream.finalResponse();
    // (the SDK's parse helper adds `parsed: null` to each part)
    expect((final.output[0] as any).content).toMatchObject([
      { type: 'output_text', text: 'Sorry, ', annotations: [], logprobs: [] },
      { type: 'refusal', refusal: 'I cannot' },
    ]);
  });

  it('turns a mid-stream failure into error + response.failed, and the SDK throws', async () => {
    const failure = new GatewayError({ status: 429, message: 'slow down', type: 'rate_limit_exceeded' });
    const { text, stream, errors } = await streamThroughSdk(
      [start, { type: 'text_delta', text: 'part' }, { type: 'tool_call_start', id: 'call_1', name: 'f' }],
      failure,
    );
    expect(errors).toEqual([failure]);
    const events = checkResponsesStream(text);
    const [error, failed] = events.slice(-2);
    expect(error).toMatchObject({
      type: 'error',
      error: { type: 'rate_limit_exceeded', code: 'rate_limit_exceeded', message: 'slow down', param: null },
    });
    expect(failed!.type).toBe('response.failed');
    expect(failed!.response).toMatchObject({ status: 'failed', error: { code: 'rate_limit_exceeded', message: 'slow down' } });
    expect(failed!.response.output.map((i: any) => i.type)).toEqual(['message', 'function_call']);
    const thrown = await stream.finalResponse().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(thrown).toBeInstanceOf(APIError);
    expect((thrown as APIError).message).toContain('slow down');
  });

  it('fails cleanly when the upstream throws before start', async () => {
    const { text, stream } = await streamThroughSdk([], new Error('boom'));
    const events = checkResponsesStream(text);
    expect(events.map((e) => e.type)).toEqual(['response.created', 'response.in_progress', 'error', 'response.failed']);
    expect(text).not.toContain('boom');
    await expect(stream.finalResponse()).rejects.toBeInstanceOf(APIError);
  });
});
