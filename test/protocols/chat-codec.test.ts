import { APIError } from 'openai';
import { describe, expect, it } from 'vitest';
import { GatewayError, type GatewayError as GatewayErrorType } from '../../src/errors.js';
import { decodeChatRequest } from '../../src/protocols/chat/decode-request.js';
import { encodeChatResponse } from '../../src/protocols/chat/encode-response.js';
import { encodeChatStream } from '../../src/protocols/chat/encode-stream.js';
import type { IRResponse, IRStreamEvent } from '../../src/protocols/ir.js';
import { collect, irStream, jsonBody, makeCtx, openaiWith, parseSse, sseBody } from './helpers.js';

const base = { model: 'public-model' };

function decode(body: Record<string, unknown>) {
  return decodeChatRequest({ ...base, ...body }, 'upstream-model');
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

describe('decodeChatRequest', () => {
  it('maps messages, tools and options', () => {
    const ir = decode({
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'developer', content: [{ type: 'text', text: 'dev rule' }] },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'look' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA', detail: 'low' } },
            { type: 'image_url', image_url: { url: 'https://x.test/a.jpg' } },
            { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBE', filename: 'a.pdf' } },
          ],
        },
        {
          role: 'assistant',
          content: 'calling',
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }],
        },
        { role: 'tool', tool_call_id: 'call_1', content: 'result' },
        { role: 'system', content: 'late system' },
        { role: 'assistant', content: null, refusal: 'no' },
      ],
      tools: [{ type: 'function', function: { name: 'f', description: 'd', parameters: { type: 'object' }, strict: true } }],
      tool_choice: { type: 'function', function: { name: 'f' } },
      parallel_tool_calls: false,
      max_tokens: 10,
      max_completion_tokens: 20,
      temperature: 0.5,
      top_p: 0.9,
      stop: 'END',
      reasoning_effort: 'high',
      response_format: { type: 'json_schema', json_schema: { name: 's', schema: { type: 'object' }, strict: true } },
      metadata: { k: 'v' },
      user: 'u1',
      stream: true,
      stream_options: { include_usage: true },
      seed: 7,
      prompt_cache_key: 'pck',
      service_tier: 'flex',
      store: false,
      safety_identifier: 'sid',
      verbosity: 'low',
      logprobs: false,
      n: 1,
    });
    expect(ir.model).toBe('upstream-model');
    expect(ir.system).toEqual([
      { type: 'text', text: 'be brief' },
      { type: 'text', text: 'dev rule' },
    ]);
    expect(ir.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'look' },
          { type: 'image', data: 'AAAA', mediaType: 'image/png', detail: 'low' },
          { type: 'image', url: 'https://x.test/a.jpg', param: 'messages[2].content[2].image_url.url' },
          { type: 'file', data: 'JVBE', mediaType: 'application/pdf', filename: 'a.pdf' },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'calling' },
          { type: 'tool_call', id: 'call_1', name: 'f', arguments: '{"a":1}', param: 'messages[3].tool_calls[0].function.arguments' },
        ],
      },
      { role: 'tool', toolCallId: 'call_1', content: [{ type: 'text', text: 'result' }], param: 'messages[4].tool_call_id' },
      { role: 'system', content: [{ type: 'text', text: 'late system' }] },
      { role: 'assistant', content: [{ type: 'refusal', refusal: 'no' }] },
    ]);
    expect(ir.tools).toEqual([{ name: 'f', description: 'd', parameters: { type: 'object' }, schemaField: 'tools[0].function.parameters', strict: true }]);
    expect(ir.toolChoice).toEqual({ type: 'tool', name: 'f', parallel: false });
    expect(ir.parallelToolCalls).toBe(false);
    expect(ir.maxOutputTokens).toBe(20);
    expect(ir.temperature).toBe(0.5);
    expect(ir.topP).toBe(0.9);
    expect(ir.stop).toEqual(['END']);
    expect(ir.reasoning).toEqual({ effort: 'high' });
    expect(ir.responseFormat).toEqual({
      type: 'json_schema',
      name: 's',
      schema: { type: 'object' },
      schemaField: 'response_format.json_schema.schema',
      strict: true,
    });
    expect(ir.metadata).toEqual({ k: 'v' });
    expect(ir.user).toBe('u1');
    expect(ir.stream).toBe(true);
    expect(ir.passthrough).toEqual({
      seed: 7,
      prompt_cache_key: 'pck',
      service_tier: 'flex',
      store: false,
      safety_identifier: 'sid',
      verbosity: 'low',
    });
  });

  it('keeps string tool choices and legacy max_tokens', () => {
    const ir = decode({ messages: [{ role: 'user', content: 'hi' }], tool_choice: 'required', max_tokens: 5, stop: ['a', 'b'] });
    expect(ir.toolChoice).toEqual({ type: 'required' });
    expect(ir.maxOutputTokens).toBe(5);
    expect(ir.stop).toEqual(['a', 'b']);
    expect(ir.stream).toBe(false);
    expect(ir.passthrough).toEqual({});
  });

  it('keeps cache_control on content parts (the OpenAI-compatible convention for Anthropic models)', () => {
    const ephemeral = { type: 'ephemeral' };
    const ir = decode({
      messages: [
        { role: 'system', content: [{ type: 'text', text: 'long prompt', cache_control: ephemeral }] },
        { role: 'user', content: [{ type: 'text', text: 'q', cache_control: ephemeral }] },
      ],
    });
    expect(ir.system).toEqual([{ type: 'text', text: 'long prompt', cacheControl: ephemeral }]);
    expect(ir.messages[0]!.content).toEqual([{ type: 'text', text: 'q', cacheControl: ephemeral }]);
  });

  it.each([
    [{ n: 2 }, 'n'],
    [{ logprobs: true }, 'logprobs'],
    [{ top_logprobs: 3 }, 'top_logprobs'],
    [{ audio: { voice: 'alloy', format: 'mp3' } }, 'audio'],
    [{ modalities: ['text', 'audio'] }, 'modalities'],
    [{ functions: [{ name: 'f' }] }, 'functions'],
    [{ function_call: 'auto' }, 'function_call'],
    [{ web_search_options: {} }, 'web_search_options'],
    [
      {
        tools: [
          { type: 'function', function: { name: 'a' } },
          { type: 'custom', custom: { name: 'b' } },
        ],
      },
      'tools[1].type',
    ],
    [{ tool_choice: { type: 'allowed_tools', allowed_tools: { mode: 'auto', tools: [] } } }, 'tool_choice.type'],
    [{ response_format: { type: 'grammar' } }, 'response_format.type'],
    [
      {
        messages: [
          { role: 'user', content: 'a' },
          { role: 'assistant', content: 'b' },
          { role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'x', format: 'wav' } }] },
        ],
      },
      'messages[2].content[0].type',
    ],
    [{ messages: [{ role: 'function', name: 'f', content: 'x' }] }, 'messages[0].role'],
    [
      { messages: [{ role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'custom', custom: { name: 'x', input: '' } }] }] },
      'messages[0].tool_calls[0].type',
    ],
    [{ messages: [{ role: 'assistant', content: null, audio: { id: 'a' } }] }, 'messages[0].audio'],
    [{ messages: [{ role: 'tool', content: 'x' }] }, 'messages[0].tool_call_id'],
    [{ temperature: 'hot' }, 'temperature'],
  ])('rejects %j naming %s', (body, param) => {
    const error = decodeError({ messages: [{ role: 'user', content: 'hi' }], ...body });
    expect(error.status).toBe(400);
    expect(error.param).toBe(param);
    expect(error.type).toBe('invalid_request_error');
  });
});

const usage = { input: 100, cachedRead: 40, cacheWrite: 10, output: 30, reasoning: 12 };

describe('encodeChatResponse', () => {
  const response: IRResponse = {
    id: 'msg_01abc',
    model: 'upstream',
    created: 1700000000,
    content: [
      { type: 'reasoning', text: 'thinking…', signature: 'sig' },
      { type: 'text', text: 'Hello ' },
      { type: 'text', text: 'world' },
      { type: 'tool_call', id: 'toolu_1', name: 'f', arguments: '{"a":1}' },
    ],
    finishReason: 'tool_calls',
    usage,
  };

  it('builds a chat.completion the SDK reads back', async () => {
    const body = encodeChatResponse(response, makeCtx({}));
    expect(body.id).toBe('chatcmpl-01abc');
    const completion = await openaiWith(jsonBody(body)).chat.completions.create({ model: 'm', messages: [] });
    expect(completion.object).toBe('chat.completion');
    expect(completion.model).toBe('public-model');
    expect(completion.created).toBe(1700000000);
    const choice = completion.choices[0]!;
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.content).toBe('Hello world');
    expect(choice.message.refusal).toBeNull();
    expect(choice.message.annotations).toEqual([]);
    expect((choice.message as unknown as { reasoning_content: string }).reasoning_content).toBe('thinking…');
    expect(choice.message.tool_calls).toEqual([{ id: 'toolu_1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }]);
    expect(completion.usage).toEqual({
      prompt_tokens: 100,
      completion_tokens: 30,
      total_tokens: 130,
      prompt_tokens_details: { cached_tokens: 40, cache_write_tokens: 10 },
      completion_tokens_details: { reasoning_tokens: 12 },
    });
  });

  it.each([
    ['stop_sequence', 'stop'],
    ['pause', 'stop'],
    ['length', 'length'],
    ['content_filter', 'content_filter'],
    ['stop', 'stop'],
  ] as const)('maps finish %s to %s', (finish, expected) => {
    const body = encodeChatResponse({ ...response, content: [{ type: 'text', text: 'x' }], finishReason: finish }, makeCtx({}));
    const choice = (body.choices as Record<string, unknown>[])[0]!;
    expect(choice.finish_reason).toBe(expected);
    const message = choice.message as Record<string, unknown>;
    expect('tool_calls' in message).toBe(false);
    expect('reasoning_content' in message).toBe(false);
  });

  it('has null content with only tool calls, and reports tool_calls even when upstream said stop', () => {
    const body = encodeChatResponse(
      { ...response, content: [{ type: 'tool_call', id: 'call_1', name: 'f', arguments: '' }], finishReason: 'stop', usage: {} },
      makeCtx({}),
    );
    const choice = (body.choices as Record<string, any>[])[0]!;
    expect(choice.message.content).toBeNull();
    expect(choice.finish_reason).toBe('tool_calls');
    expect(body.usage).toMatchObject({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });
  });
});

const start: IRStreamEvent = { type: 'start', id: 'chatcmpl-up1', model: 'upstream', created: 1700000001, usage: { input: 100, cachedRead: 40 } };

async function streamThroughSdk(events: IRStreamEvent[], request: Record<string, unknown>, fail?: unknown) {
  const errors: GatewayErrorType[] = [];
  const text = await collect(encodeChatStream(irStream(events, fail), makeCtx(request, errors)));
  const stream = openaiWith(sseBody(text)).chat.completions.stream({ model: 'm', messages: [{ role: 'user', content: 'x' }] });
  return { text, stream, errors };
}

describe('encodeChatStream through the OpenAI SDK', () => {
  const withUsage = { stream: true, stream_options: { include_usage: true } };

  it('streams text in several deltas, then the usage chunk and [DONE]', async () => {
    const { text, stream } = await streamThroughSdk(
      [
        start,
        { type: 'text_delta', text: 'Hel' },
        { type: 'text_delta', text: '' },
        { type: 'text_delta', text: 'lo ' },
        { type: 'text_delta', text: 'there' },
        { type: 'usage', usage: { output: 5 } },
        { type: 'finish', reason: 'stop', usage: { reasoning: 0 } },
      ],
      withUsage,
    );
    const completion = await stream.finalChatCompletion();
    expect(completion.id).toBe('chatcmpl-up1');
    expect(completion.model).toBe('public-model');
    expect(completion.choices[0]!.message.content).toBe('Hello there');
    expect(completion.choices[0]!.message.role).toBe('assistant');
    expect(completion.choices[0]!.finish_reason).toBe('stop');
    expect(completion.usage).toMatchObject({
      prompt_tokens: 100,
      completion_tokens: 5,
      total_tokens: 105,
      prompt_tokens_details: { cached_tokens: 40 },
    });

    const frames = parseSse(text);
    expect(frames.every((f) => f.event === undefined)).toBe(true);
    expect(frames.at(-1)!.data).toBe('[DONE]');
    const chunks = frames.slice(0, -1).map((f) => JSON.parse(f.data));
    expect(chunks.at(-1).choices).toEqual([]);
    expect(chunks.slice(0, -1).every((c) => c.usage === null && c.choices.length === 1)).toBe(true);
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
  });

  it('sends no usage chunk unless include_usage was asked', async () => {
    const { text, stream } = await streamThroughSdk([start, { type: 'text_delta', text: 'hi' }, { type: 'finish', reason: 'stop', usage: { output: 1 } }], {
      stream: true,
    });
    const completion = await stream.finalChatCompletion();
    expect(completion.choices[0]!.message.content).toBe('hi');
    expect(completion.usage).toBeUndefined();
    const chunks = parseSse(text)
      .slice(0, -1)
      .map((f) => JSON.parse(f.data));
    expect(chunks.every((c) => c.choices.length === 1 && !('usage' in c))).toBe(true);
  });

  it('streams reasoning then text', async () => {
    const { text, stream } = await streamThroughSdk(
      [
        start,
        { type: 'reasoning_delta', text: 'let me ' },
        { type: 'reasoning_delta', text: 'think' },
        { type: 'reasoning_end', signature: 'sig' },
        { type: 'text_delta', text: 'Answer' },
        { type: 'finish', reason: 'stop', usage: { output: 9, reasoning: 4 } },
      ],
      withUsage,
    );
    const completion = await stream.finalChatCompletion();
    expect(completion.choices[0]!.message.content).toBe('Answer');
    expect(completion.usage?.completion_tokens_details?.reasoning_tokens).toBe(4);
    const reasoning = parseSse(text)
      .slice(0, -1)
      .map((f) => JSON.parse(f.data).choices[0]?.delta?.reasoning_content)
      .filter(Boolean)
      .join('');
    expect(reasoning).toBe('let me think');
  });

  it('streams text then two tool calls with counter indexes', async () => {
    const { text, stream } = await streamThroughSdk(
      [
        start,
        { type: 'text_delta', text: 'Checking.' },
        { type: 'tool_call_start', id: 'call_a', name: 'weather' },
        { type: 'tool_call_delta', arguments: '{"city":' },
        { type: 'tool_call_delta', arguments: '"Paris"}' },
        { type: 'tool_call_start', id: 'toolu_b', name: 'time' },
        { type: 'tool_call_delta', arguments: '{}' },
        { type: 'finish', reason: 'tool_calls', usage: { output: 20 } },
      ],
      withUsage,
    );
    const completion = await stream.finalChatCompletion();
    const message = completion.choices[0]!.message;
    expect(completion.choices[0]!.finish_reason).toBe('tool_calls');
    expect(message.content).toBe('Checking.');
    expect(message.tool_calls).toEqual([
      { id: 'call_a', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } },
      { id: 'toolu_b', type: 'function', function: { name: 'time', arguments: '{}' } },
    ]);
    const firstDeltas = parseSse(text)
      .slice(0, -1)
      .flatMap((f) => JSON.parse(f.data).choices[0]?.delta?.tool_calls ?? [])
      .filter((call: Record<string, unknown>) => call.id);
    expect(firstDeltas).toEqual([
      { index: 0, id: 'call_a', type: 'function', function: { name: 'weather', arguments: '' } },
      { index: 1, id: 'toolu_b', type: 'function', function: { name: 'time', arguments: '' } },
    ]);
  });

  it('streams a tool call only, with null content', async () => {
    const { stream } = await streamThroughSdk([start, { type: 'tool_call_start', id: 'call_z', name: 'noop' }, { type: 'finish', reason: 'stop' }], withUsage);
    const completion = await stream.finalChatCompletion();
    expect(completion.choices[0]!.message.content).toBeNull();
    expect(completion.choices[0]!.finish_reason).toBe('tool_calls');
    expect(completion.choices[0]!.message.tool_calls).toEqual([{ id: 'call_z', type: 'function', function: { name: 'noop', arguments: '' } }]);
  });

  it('reports a length finish', async () => {
    const { stream } = await streamThroughSdk(
      [start, { type: 'text_delta', text: 'cut' }, { type: 'finish', reason: 'length', usage: { output: 1 } }],
      withUsage,
    );
    const completion = await stream.finalChatCompletion();
    expect(completion.choices[0]!.finish_reason).toBe('length');
    expect(completion.choices[0]!.message.content).toBe('cut');
  });

  it('turns a mid-stream failure into an error the SDK throws, without [DONE]', async () => {
    const failure = new GatewayError({ status: 503, message: 'upstream overloaded', code: 'overloaded' });
    const { text, stream, errors } = await streamThroughSdk([start, { type: 'text_delta', text: 'partial' }], withUsage, failure);
    expect(text).not.toContain('[DONE]');
    expect(errors).toEqual([failure]);
    const frames = parseSse(text);
    expect(JSON.parse(frames.at(-1)!.data)).toEqual({
      error: { message: 'upstream overloaded', type: 'server_error', param: null, code: 'overloaded' },
    });
    const error = await stream.finalChatCompletion().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(APIError);
    expect((error as APIError).message).toContain('upstream overloaded');
    expect((error as APIError).code).toBe('overloaded');
  });

  it('masks unexpected errors and treats a stream without finish as a failure', async () => {
    const masked = await streamThroughSdk([start, { type: 'text_delta', text: 'x' }], withUsage, new TypeError('secret detail'));
    expect(masked.text).not.toContain('secret detail');
    expect(masked.errors[0]?.status).toBe(500);
    await expect(masked.stream.finalChatCompletion()).rejects.toBeInstanceOf(APIError);

    const cut = await streamThroughSdk([start, { type: 'text_delta', text: 'x' }], withUsage);
    expect(cut.text).not.toContain('[DONE]');
    expect(cut.errors).toHaveLength(1);
    await expect(cut.stream.finalChatCompletion()).rejects.toBeInstanceOf(APIError);
  });
});

describe('unknown fields (spec: additionalProperties everywhere)', () => {
  it('are accepted by every request decoder and do not reach the IR', async () => {
    const { decodeResponsesRequest } = await import('../../src/protocols/responses/decode-request.js');
    const { decodeMessagesRequest } = await import('../../src/protocols/messages/decode-request.js');
    const chat = decodeChatRequest({ model: 'm', messages: [{ role: 'user', content: 'hi' }], some_vendor_field: 1 }, 'up');
    const responses = decodeResponsesRequest({ model: 'm', input: 'hi', frequency_penalty: 1, x_extra: { a: 1 } }, 'up');
    const messages = decodeMessagesRequest(
      { model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }], some_field: 1, metadata: { user_id: 'u', extra: 1 } },
      'up',
    );
    for (const ir of [chat, responses, messages]) {
      expect(ir.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'hi' }] }]);
      expect(JSON.stringify(ir)).not.toMatch(/some_vendor_field|frequency_penalty|x_extra|some_field|extra/);
    }
  });

  it('top_k, which OpenAI-family upstreams lack, is dropped and noted as the client named it; strictParams refuses it', async () => {
    const { encodeChatRequest } = await import('../../src/protocols/chat/encode-request.js');
    const { encodeResponsesRequest } = await import('../../src/protocols/responses/encode-request.js');
    for (const encode of [encodeChatRequest, encodeResponsesRequest]) {
      const ir = {
        model: 'm',
        system: [],
        messages: [],
        stream: false,
        passthrough: {},
        topK: 5,
        clientFields: { topK: 'generationConfig.topK' },
        droppedParams: [],
      };
      expect(encode(ir)).not.toHaveProperty('top_k');
      expect(ir.droppedParams).toEqual(['generationConfig.topK']);
      expect(() => encode({ ...ir, strictParams: true })).toThrowError(expect.objectContaining({ status: 400, param: 'generationConfig.topK' }));
    }
  });
});
