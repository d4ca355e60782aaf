import { APIError } from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { GatewayError, type GatewayError as GatewayErrorType } from '../../src/errors.js';
import type { IRResponse, IRStreamEvent } from '../../src/protocols/ir.js';
import { decodeMessagesRequest } from '../../src/protocols/messages/decode-request.js';
import { encodeMessagesResponse } from '../../src/protocols/messages/encode-response.js';
import { encodeMessagesStream } from '../../src/protocols/messages/encode-stream.js';
import { anthropicErrorType } from '../../src/protocols/messages/error-type.js';
import { anthropicWith, checkMessagesStream, collect, irStream, jsonBody, makeCtx, sseBody } from './helpers.js';

const base = { model: 'public-model', max_tokens: 1024 };

function decode(body: Record<string, unknown>) {
  return decodeMessagesRequest({ ...base, messages: [{ role: 'user', content: 'hi' }], ...body }, 'upstream-model');
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

const ephemeral = { type: 'ephemeral' };

describe('decodeMessagesRequest', () => {
  it('maps system, content blocks, tool use and tool results', () => {
    const ir = decode({
      system: [
        { type: 'text', text: 'rules', cache_control: ephemeral },
        { type: 'text', text: 'more' },
      ],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'look', cache_control: ephemeral },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } },
            { type: 'image', source: { type: 'url', url: 'https://x.test/a.png' } },
            { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBE' }, title: 'doc.pdf' },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'hmm', signature: 'SIG' },
            { type: 'redacted_thinking', data: 'REDACTED' },
            { type: 'text', text: 'calling' },
            { type: 'tool_use', id: 'toolu_1', name: 'f', input: { a: 1 } },
            { type: 'tool_use', id: 'toolu_2', name: 'g', input: {} },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: 'one' },
            {
              type: 'tool_result',
              tool_use_id: 'toolu_2',
              is_error: true,
              content: [{ type: 'text', text: 'bad' }],
              cache_control: ephemeral,
            },
            { type: 'text', text: 'and now?' },
          ],
        },
      ],
    });
    expect(ir.model).toBe('upstream-model');
    expect(ir.system).toEqual([
      { type: 'text', text: 'rules', cacheControl: ephemeral },
      { type: 'text', text: 'more' },
    ]);
    expect(ir.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'look', cacheControl: ephemeral },
          { type: 'image', data: 'AAAA', mediaType: 'image/png' },
          { type: 'image', url: 'https://x.test/a.png', param: 'messages[0].content[2].source.url' },
          { type: 'file', data: 'JVBE', mediaType: 'application/pdf', filename: 'doc.pdf' },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'hmm', signature: 'SIG' },
          { type: 'reasoning', text: '', redacted: 'REDACTED' },
          { type: 'text', text: 'calling' },
          { type: 'tool_call', id: 'toolu_1', name: 'f', arguments: '{"a":1}' },
          { type: 'tool_call', id: 'toolu_2', name: 'g', arguments: '{}' },
        ],
      },
      { role: 'tool', toolCallId: 'toolu_1', content: [{ type: 'text', text: 'one' }], param: 'messages[2].content[0].tool_use_id' },
      {
        role: 'tool',
        toolCallId: 'toolu_2',
        isError: true,
        content: [{ type: 'text', text: 'bad', cacheControl: ephemeral }],
        param: 'messages[2].content[1].tool_use_id',
      },
      { role: 'user', content: [{ type: 'text', text: 'and now?' }] },
    ]);
  });

  it('maps tools, tool choice, thinking and options', () => {
    const ir = decode({
      system: 'plain system',
      tools: [{ name: 'f', description: 'd', input_schema: { type: 'object', properties: {} }, cache_control: ephemeral }],
      tool_choice: { type: 'any', disable_parallel_tool_use: true },
      thinking: { type: 'enabled', budget_tokens: 2048 },
      temperature: 0.7,
      top_p: 0.95,
      top_k: 40,
      stop_sequences: ['###'],
      metadata: { user_id: 'user-1' },
      output_config: { format: { type: 'json_schema', schema: { type: 'object' } } },
      stream: true,
      service_tier: 'auto',
    });
    expect(ir.system).toEqual([{ type: 'text', text: 'plain system' }]);
    expect(ir.tools).toEqual([
      { name: 'f', description: 'd', parameters: { type: 'object', properties: {} }, schemaField: 'tools[0].input_schema', cacheControl: ephemeral },
    ]);
    expect(ir.toolChoice).toEqual({ type: 'required', parallel: false });
    expect(ir.parallelToolCalls).toBe(false);
    expect(ir.reasoning).toEqual({ budgetTokens: 2048 });
    expect(ir.maxOutputTokens).toBe(1024);
    expect(ir.temperature).toBe(0.7);
    expect(ir.topP).toBe(0.95);
    expect(ir.passthrough).toEqual({});
    expect(ir.topK).toBe(40);
    expect(ir.stop).toEqual(['###']);
    expect(ir.user).toBe('user-1');
    expect(ir.metadata).toBeUndefined();
    expect(ir.responseFormat).toEqual({ type: 'json_schema', schema: { type: 'object' }, schemaField: 'output_config.format.schema' });
    expect(ir.stream).toBe(true);
  });

  it.each([
    [{ type: 'auto' }, { type: 'auto' }],
    [{ type: 'none' }, { type: 'none' }],
    [
      { type: 'tool', name: 'f', disable_parallel_tool_use: false },
      { type: 'tool', name: 'f', parallel: true },
    ],
  ])('maps tool_choice %j', (choice, expected) => {
    expect(decode({ tool_choice: choice }).toolChoice).toEqual(expected);
  });

  it.each([
    [{ type: 'adaptive' }, undefined, { effort: 'medium' }],
    [{ type: 'adaptive' }, { effort: 'high' }, { effort: 'high' }],
    [{ type: 'disabled' }, undefined, undefined],
    [undefined, { effort: 'low' }, { effort: 'low' }],
  ])('maps thinking %j with output_config %j', (thinking, outputConfig, expected) => {
    const ir = decode({ ...(thinking ? { thinking } : {}), ...(outputConfig ? { output_config: outputConfig } : {}) });
    expect(ir.reasoning).toEqual(expected);
  });

  it('applies top-level automatic caching to the last block', () => {
    const ir = decode({
      cache_control: ephemeral,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'a' },
            { type: 'text', text: 'b' },
          ],
        },
      ],
    });
    expect(ir.messages[0]!.content).toEqual([
      { type: 'text', text: 'a' },
      { type: 'text', text: 'b', cacheControl: ephemeral },
    ]);
  });

  it.each([
    [
      {
        tools: [
          { name: 'f', input_schema: { type: 'object' } },
          { type: 'web_search_20250305', name: 'web_search' },
        ],
      },
      'tools[1].type',
    ],
    [{ messages: [{ role: 'tool', content: 'x' }] }, 'messages[0].role'],
    [{ tools: [{ type: 'bash_20250124', name: 'bash' }] }, 'tools[0].type'],
    [{ tools: [{ type: 'tool_search_tool_regex_20251119', name: 'tool_search_tool_regex' }] }, 'tools[0].type'],
    [
      {
        messages: [
          { role: 'user', content: 'q' },
          { role: 'system', content: [{ type: 'image', source: { type: 'url', url: 'https://x.test/a.png' } }] },
        ],
      },
      'messages[1].content[0].type',
    ],
    [
      {
        messages: [
          { role: 'user', content: 'q' },
          { role: 'system', content: [{ type: 'tool_addition', tool: { type: 'mcp_toolset_reference', server_name: 's' } }] },
        ],
      },
      'messages[1].content[0].tool.type',
    ],
    [{ messages: [{ role: 'user', content: [{ type: 'search_result', source: 's', title: 't', content: [] }] }] }, 'messages[0].content[0].type'],
    [
      {
        messages: [
          { role: 'user', content: 'q' },
          { role: 'assistant', content: [{ type: 'server_tool_use', id: 's', name: 'web_search', input: {} }] },
        ],
      },
      'messages[1].content[0].type',
    ],
    [{ messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'file', file_id: 'f' } }] }] }, 'messages[0].content[0].source.type'],
    [
      {
        messages: [
          { role: 'user', content: [{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'x' }, citations: { enabled: true } }] },
        ],
      },
      'messages[0].content[0].citations',
    ],
    [{ container: 'c' }, 'container'],
    [{ mcp_servers: [] }, 'mcp_servers'],
    [{ thinking: { type: 'enabled' } }, 'thinking.budget_tokens'],
    [{ tool_choice: { type: 'required' } }, 'tool_choice.type'],
    [{ output_config: { format: { type: 'regex' } } }, 'output_config.format.type'],
  ])('rejects %j naming %s', (body, param) => {
    const error = decodeError(body);
    expect(error.status).toBe(400);
    expect(error.param).toBe(param);
  });
});

describe('decodeMessagesRequest: what Claude Code sends', () => {
  const schema = { type: 'object', properties: {} };

  it('keeps system messages in place, drops cleared ones and keeps their cache breakpoints', () => {
    const ir = decode({
      messages: [
        { role: 'user', content: 'first' },
        { role: 'system', content: [{ type: 'text', text: '# Environment', cache_control: ephemeral }] },
        { role: 'system', content: 'shown once', clear_at: 'next_user_message' },
        { role: 'assistant', content: 'ok' },
        { role: 'user', content: 'second' },
        { role: 'system', content: 'still shown', clear_at: 'next_user_message', output_config: { effort: 'low' } },
        { role: 'system', output_config: { effort: 'low' } },
      ],
    });
    expect(ir.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'first' }] },
      { role: 'system', content: [{ type: 'text', text: '# Environment', cacheControl: ephemeral }] },
      { role: 'assistant', content: [{ type: 'text', text: 'ok' }] },
      { role: 'user', content: [{ type: 'text', text: 'second' }] },
      { role: 'system', content: [{ type: 'text', text: 'still shown' }] },
    ]);
  });

  it('drops context_management and inference_geo, which only tune how Anthropic runs the request', () => {
    const ir = decode({ context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] }, inference_geo: 'us' });
    expect(ir.passthrough).toEqual({});
    expect(ir.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'hi' }] }]);
  });

  it.each([
    [{ type: 'adaptive', display: 'omitted' }, { effort: 'high' }, { effort: 'high' }],
    [{ type: 'adaptive', display: 'summarized' }, { effort: 'xhigh' }, { effort: 'xhigh' }],
    [{ type: 'adaptive' }, { effort: 'max' }, { effort: 'max' }],
    [{ type: 'between_tools' }, undefined, { effort: 'medium' }],
    [{ type: 'enabled', budget_tokens: 4096, display: 'omitted' }, undefined, { budgetTokens: 4096 }],
  ])('maps thinking %j with output_config %j to %j', (thinking, outputConfig, expected) => {
    expect(decode({ thinking, ...(outputConfig ? { output_config: outputConfig } : {}) }).reasoning).toEqual(expected);
  });

  it('sends a long metadata.user_id as its SHA-256 hex (OpenAI takes 64 characters), a short one as is', () => {
    const long = JSON.stringify({ device_id: 'd'.repeat(64), account_uuid: '', session_id: 'af68da0f-1b25-4148-aa44-f5b6835e59eb' });
    const hashed = decode({ metadata: { user_id: long } }).user!;
    expect(hashed).toMatch(/^[0-9a-f]{64}$/);
    expect(decode({ metadata: { user_id: long } }).user).toBe(hashed);
    expect(decode({ metadata: { user_id: 'user-1' } }).user).toBe('user-1');
  });

  it('leaves deferred tools out until a tool search result references them, and reads the reference as text', () => {
    const tools = [
      { name: 'Read', description: 'Reads a file', input_schema: schema, eager_input_streaming: true, input_examples: [{}] },
      { name: 'ToolSearch', input_schema: schema },
      { name: 'DeferredToolPlaceholder', description: 'never call this', input_schema: schema, defer_loading: true },
      { name: 'CronCreate', input_schema: schema, defer_loading: true },
    ];
    expect(decode({ tools }).tools!.map((tool) => tool.name)).toEqual(['Read', 'ToolSearch']);
    expect(decode({ tools }).tools![0]).toEqual({ name: 'Read', description: 'Reads a file', parameters: schema, schemaField: 'tools[0].input_schema' });

    const ir = decode({
      tools,
      messages: [
        { role: 'user', content: 'schedule it' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'ToolSearch', input: { query: 'select:CronCreate', max_results: 5 } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'tool_reference', tool_name: 'CronCreate' }] }] },
      ],
    });
    expect(ir.tools!.map((tool) => tool.name)).toEqual(['Read', 'ToolSearch', 'CronCreate']);
    expect(ir.messages[2]).toEqual({
      role: 'tool',
      toolCallId: 'toolu_1',
      content: [{ type: 'text', text: 'Tool loaded: CronCreate' }],
      param: 'messages[2].content[0].tool_use_id',
    });
  });

  it('applies tool_addition and tool_removal blocks of system messages to the tool set', () => {
    const ir = decode({
      tools: [
        { name: 'Read', input_schema: schema },
        { name: 'Write', input_schema: schema },
        { name: 'Monitor', input_schema: schema, defer_loading: true },
      ],
      messages: [
        { role: 'user', content: 'go' },
        {
          role: 'system',
          content: [
            { type: 'tool_addition', tool: { type: 'tool_definition', definition: { name: 'CronList', description: 'List jobs', input_schema: schema } } },
            { type: 'tool_addition', tool: { type: 'tool_reference', name: 'Monitor' } },
            { type: 'tool_removal', tool: { type: 'tool_reference', name: 'Write' } },
          ],
        },
      ],
    });
    expect(ir.tools).toEqual([
      { name: 'Read', parameters: schema, schemaField: 'tools[0].input_schema' },
      { name: 'CronList', description: 'List jobs', parameters: schema, schemaField: 'messages[1].content[0].tool.definition.input_schema' },
      { name: 'Monitor', parameters: schema, schemaField: 'tools[2].input_schema' },
    ]);
    // A system message of tool changes only has no text to show.
    expect(ir.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'go' }] }]);
  });

  it.each([
    ['web_search_20250305', /runs on Anthropic's servers/],
    ['web_fetch_20250910', /runs on Anthropic's servers/],
    ['code_execution_20250825', /runs on Anthropic's servers/],
    ['text_editor_20250728', /schema only Claude knows/],
    ['computer_20250124', /schema only Claude knows/],
  ])('answers a clear 400 for the Anthropic-defined tool %s', (type, message) => {
    const error = decodeError({
      tools: [
        { name: 'Read', input_schema: schema },
        { type, name: 'x' },
      ],
    });
    expect(error).toMatchObject({ status: 400, param: 'tools[1].type', code: 'unsupported_parameter' });
    expect(error.message).toMatch(message);
  });

  it('reads thinking signatures back by their origin: Anthropic signature, gateway-carried OpenAI reasoning, none', () => {
    const ir = decode({
      messages: [
        { role: 'user', content: 'q' },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: '', signature: 'EqQBCgIYAh' },
            { type: 'thinking', thinking: 'summary', signature: 'infergate-encrypted:gAAAAABenc' },
            { type: 'thinking', thinking: 'unsigned', signature: '' },
            { type: 'text', text: 'a' },
          ],
        },
      ],
    });
    expect(ir.messages[1]!.content).toEqual([
      { type: 'reasoning', text: '', signature: 'EqQBCgIYAh' },
      { type: 'reasoning', text: 'summary', encrypted: 'gAAAAABenc' },
      { type: 'reasoning', text: 'unsigned' },
      { type: 'text', text: 'a' },
    ]);
  });
});

/** Cache semantics: IR input includes cache; Anthropic input_tokens excludes reads and writes. */
const usage = { input: 1000, cachedRead: 700, cacheWrite: 200, output: 50 };

describe('encodeMessagesResponse', () => {
  const response: IRResponse = {
    id: 'chatcmpl-abc',
    model: 'upstream',
    created: 1700000000,
    content: [
      { type: 'reasoning', text: 'pondering', signature: 'SIG' },
      { type: 'text', text: 'Here you go' },
      { type: 'tool_call', id: 'call_1', name: 'f', arguments: '{"city":"Oslo"}' },
      { type: 'tool_call', id: 'call_2', name: 'g', arguments: '{"cut' },
    ],
    finishReason: 'tool_calls',
    usage,
  };

  it('builds a Message the SDK reads back', async () => {
    const body = encodeMessagesResponse(response, makeCtx({}));
    const message = await anthropicWith(jsonBody(body)).messages.create({ model: 'm', max_tokens: 10, messages: [] });
    expect(message.id).toBe('msg_abc');
    expect(message.type).toBe('message');
    expect(message.role).toBe('assistant');
    expect(message.model).toBe('public-model');
    expect(message.content).toEqual([
      { type: 'thinking', thinking: 'pondering', signature: 'SIG' },
      { type: 'text', text: 'Here you go' },
      { type: 'tool_use', id: 'call_1', name: 'f', input: { city: 'Oslo' } },
      { type: 'tool_use', id: 'call_2', name: 'g', input: {} },
    ]);
    expect(message.stop_reason).toBe('tool_use');
    expect(message.stop_sequence).toBeNull();
    expect(message.usage).toEqual({ input_tokens: 100, cache_read_input_tokens: 700, cache_creation_input_tokens: 200, output_tokens: 50 });
  });

  it.each([
    ['stop', 'end_turn'],
    ['length', 'max_tokens'],
    ['content_filter', 'refusal'],
    ['stop_sequence', 'stop_sequence'],
    ['pause', 'pause_turn'],
    ['tool_calls', 'tool_use'],
  ] as const)('maps finish %s to %s', (finish, expected) => {
    const body = encodeMessagesResponse(
      { ...response, content: [{ type: 'text', text: 'x' }], finishReason: finish, ...(finish === 'stop_sequence' ? { stopSequence: '###' } : {}) },
      makeCtx({}),
    );
    expect(body.stop_reason).toBe(expected);
    expect(body.stop_sequence).toBe(finish === 'stop_sequence' ? '###' : null);
  });

  it('carries OpenAI encrypted reasoning in a prefixed signature the decoder reads back', () => {
    const body = encodeMessagesResponse(
      {
        ...response,
        content: [
          { type: 'reasoning', text: 'summary', encrypted: 'ENC' },
          { type: 'text', text: 'ok' },
        ],
        finishReason: 'stop',
      },
      makeCtx({}),
    );
    expect(body.content).toEqual([
      { type: 'thinking', thinking: 'summary', signature: 'infergate-encrypted:ENC' },
      { type: 'text', text: 'ok' },
    ]);
    const ir = decode({
      messages: [
        { role: 'user', content: 'q' },
        { role: 'assistant', content: body.content },
      ],
    });
    expect(ir.messages[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'reasoning', text: 'summary', encrypted: 'ENC' },
        { type: 'text', text: 'ok' },
      ],
    });
  });

  it('reports reasoning tokens as output_tokens_details.thinking_tokens when the upstream counted them', () => {
    const body = encodeMessagesResponse({ ...response, usage: { ...usage, reasoning: 30 } }, makeCtx({}));
    expect(body.usage).toEqual({
      input_tokens: 100,
      cache_read_input_tokens: 700,
      cache_creation_input_tokens: 200,
      output_tokens: 50,
      output_tokens_details: { thinking_tokens: 30 },
    });
  });

  it('keeps Anthropic redacted thinking as a redacted_thinking block', () => {
    const body = encodeMessagesResponse({ ...response, content: [{ type: 'reasoning', text: '', redacted: 'RED' }], finishReason: 'stop' }, makeCtx({}));
    expect(body.content).toEqual([{ type: 'redacted_thinking', data: 'RED' }]);
    const ir = decode({
      messages: [
        { role: 'user', content: 'q' },
        { role: 'assistant', content: body.content },
      ],
    });
    expect(ir.messages[1]!.content).toEqual([{ type: 'reasoning', text: '', redacted: 'RED' }]);
  });

  it('with thinking display "omitted" sends signatures without text, and no unsigned thinking at all', () => {
    const ctx = makeCtx({ thinking: { type: 'adaptive', display: 'omitted' } });
    const body = encodeMessagesResponse(
      {
        ...response,
        content: [
          { type: 'reasoning', text: 'plain chat reasoning' },
          { type: 'reasoning', text: 'summary', encrypted: 'ENC' },
          { type: 'reasoning', text: 'claude thinking', signature: 'SIG' },
          { type: 'text', text: 'ok' },
        ],
        finishReason: 'stop',
      },
      ctx,
    );
    expect(body.content).toEqual([
      { type: 'thinking', thinking: '', signature: 'infergate-encrypted:ENC' },
      { type: 'thinking', thinking: '', signature: 'SIG' },
      { type: 'text', text: 'ok' },
    ]);
  });
});

const start: IRStreamEvent = { type: 'start', id: 'msg_up', model: 'upstream', created: 1700000003, usage: { input: 1000, cachedRead: 700, cacheWrite: 200 } };

async function streamThroughSdk(events: IRStreamEvent[], fail?: unknown) {
  const errors: GatewayErrorType[] = [];
  const text = await collect(encodeMessagesStream(irStream(events, fail), makeCtx({ stream: true }, errors)));
  const stream = anthropicWith(sseBody(text)).messages.stream({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] });
  return { text, stream, errors };
}

describe('encodeMessagesStream through the Anthropic SDK', () => {
  it('streams text in several deltas with usage split into input / cache counters', async () => {
    const { text, stream } = await streamThroughSdk([
      start,
      { type: 'text_delta', text: 'Hel' },
      { type: 'text_delta', text: 'lo' },
      { type: 'finish', reason: 'stop', usage: { output: 2 } },
    ]);
    const events = checkMessagesStream(text);
    expect(events.map((e) => e.type)).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(events[0]!.message.usage).toEqual({ input_tokens: 100, cache_read_input_tokens: 700, cache_creation_input_tokens: 200, output_tokens: 0 });
    const message = await stream.finalMessage();
    expect(message.id).toBe('msg_up');
    expect(message.model).toBe('public-model');
    expect(message.content).toEqual([{ type: 'text', text: 'Hello' }]);
    expect(message.stop_reason).toBe('end_turn');
    expect(message.usage).toMatchObject({ input_tokens: 100, cache_read_input_tokens: 700, cache_creation_input_tokens: 200, output_tokens: 2 });
  });

  it('streams thinking with its signature, then text', async () => {
    const { text, stream } = await streamThroughSdk([
      start,
      { type: 'reasoning_delta', text: 'step 1, ' },
      { type: 'reasoning_delta', text: 'step 2' },
      { type: 'reasoning_end', signature: 'SIG' },
      { type: 'text_delta', text: 'Answer' },
      { type: 'finish', reason: 'stop', usage: { output: 12 } },
    ]);
    const events = checkMessagesStream(text);
    const deltas = events.filter((e) => e.type === 'content_block_delta').map((e) => e.delta.type);
    expect(deltas).toEqual(['thinking_delta', 'thinking_delta', 'signature_delta', 'text_delta']);
    const message = await stream.finalMessage();
    expect(message.content).toEqual([
      { type: 'thinking', thinking: 'step 1, step 2', signature: 'SIG' },
      { type: 'text', text: 'Answer' },
    ]);
  });

  it('streams text then two tool calls as tool_use blocks', async () => {
    const { text, stream } = await streamThroughSdk([
      start,
      { type: 'text_delta', text: 'Checking' },
      { type: 'tool_call_start', id: 'call_a', name: 'weather' },
      { type: 'tool_call_delta', arguments: '{"city":' },
      { type: 'tool_call_delta', arguments: '"Rome"}' },
      { type: 'tool_call_start', id: 'call_b', name: 'time' },
      { type: 'finish', reason: 'tool_calls', usage: { output: 33 } },
    ]);
    const events = checkMessagesStream(text);
    expect(events.filter((e) => e.type === 'content_block_start').map((e) => e.content_block)).toEqual([
      { type: 'text', text: '' },
      { type: 'tool_use', id: 'call_a', name: 'weather', input: {} },
      { type: 'tool_use', id: 'call_b', name: 'time', input: {} },
    ]);
    const message = await stream.finalMessage();
    expect(message.content).toEqual([
      { type: 'text', text: 'Checking' },
      { type: 'tool_use', id: 'call_a', name: 'weather', input: { city: 'Rome' } },
      { type: 'tool_use', id: 'call_b', name: 'time', input: {} },
    ]);
    expect(message.stop_reason).toBe('tool_use');
    expect(message.usage.output_tokens).toBe(33);
  });

  it('streams a tool call only; a plain stop with tool calls is reported as tool_use', async () => {
    const { text, stream } = await streamThroughSdk([
      { type: 'start', id: 'x', model: 'u', created: 1 },
      { type: 'tool_call_start', id: 'toolu_1', name: 'f' },
      { type: 'tool_call_delta', arguments: '{"q":1}' },
      { type: 'finish', reason: 'stop', usage: { input: 10, output: 3 } },
    ]);
    const events = checkMessagesStream(text);
    expect(events[0]!.message.usage.input_tokens).toBe(0);
    const message = await stream.finalMessage();
    expect(message.content).toEqual([{ type: 'tool_use', id: 'toolu_1', name: 'f', input: { q: 1 } }]);
    expect(message.stop_reason).toBe('tool_use');
    // Input learned only at the finish reaches the client through message_delta.
    expect(message.usage.input_tokens).toBe(10);
  });

  it('reports a length finish as max_tokens', async () => {
    const { text, stream } = await streamThroughSdk([start, { type: 'text_delta', text: 'cut' }, { type: 'finish', reason: 'length', usage: { output: 1 } }]);
    checkMessagesStream(text);
    const message = await stream.finalMessage();
    expect(message.stop_reason).toBe('max_tokens');
    expect(message.content).toEqual([{ type: 'text', text: 'cut' }]);
  });

  it('carries OpenAI encrypted reasoning as the signature and Anthropic redacted data as a redacted_thinking block', async () => {
    const { text, stream } = await streamThroughSdk([
      start,
      { type: 'reasoning_delta', text: 'sum' },
      { type: 'reasoning_end', encrypted: 'ENC' },
      { type: 'reasoning_end', redacted: 'RED' },
      { type: 'text_delta', text: 'ok' },
      { type: 'finish', reason: 'stop' },
    ]);
    checkMessagesStream(text);
    const message = await stream.finalMessage();
    expect(message.content).toEqual([
      { type: 'thinking', thinking: 'sum', signature: 'infergate-encrypted:ENC' },
      { type: 'redacted_thinking', data: 'RED' },
      { type: 'text', text: 'ok' },
    ]);
  });

  it('with thinking display "omitted" streams no thinking text, only signed thinking blocks', async () => {
    const errors: GatewayErrorType[] = [];
    const request = { stream: true, thinking: { type: 'adaptive', display: 'omitted' } };
    const events: IRStreamEvent[] = [
      start,
      { type: 'reasoning_delta', text: 'unsigned thoughts' },
      { type: 'reasoning_end' },
      { type: 'reasoning_delta', text: 'signed thoughts' },
      { type: 'reasoning_end', signature: 'SIG' },
      { type: 'text_delta', text: 'Answer' },
      { type: 'finish', reason: 'stop', usage: { output: 12 } },
    ];
    const text = await collect(encodeMessagesStream(irStream(events), makeCtx(request, errors)));
    expect(text).not.toContain('thoughts');
    const deltas = checkMessagesStream(text)
      .filter((e) => e.type === 'content_block_delta')
      .map((e) => e.delta.type);
    expect(deltas).toEqual(['signature_delta', 'text_delta']);
    const message = await anthropicWith(sseBody(text))
      .messages.stream({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] })
      .finalMessage();
    expect(message.content).toEqual([
      { type: 'thinking', thinking: '', signature: 'SIG' },
      { type: 'text', text: 'Answer' },
    ]);
  });

  it('turns a mid-stream failure into an error event the SDK throws', async () => {
    const failure = new GatewayError({ status: 503, message: 'overloaded upstream' });
    const { text, stream, errors } = await streamThroughSdk([start, { type: 'text_delta', text: 'part' }], failure);
    expect(errors).toEqual([failure]);
    const events = checkMessagesStream(text);
    expect(events.at(-1)).toEqual({ type: 'error', error: { type: 'overloaded_error', message: 'overloaded upstream' }, request_id: 'req_test' });
    expect(events.some((e) => e.type === 'message_stop' || e.type === 'message_delta')).toBe(false);
    const thrown = await stream.finalMessage().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(thrown).toBeInstanceOf(APIError);
    expect((thrown as APIError).message).toContain('overloaded upstream');
  });

  it('masks an unexpected error as api_error', async () => {
    const { text, stream, errors } = await streamThroughSdk([start], new Error('secret'));
    expect(text).not.toContain('secret');
    expect(errors[0]?.status).toBe(500);
    expect(checkMessagesStream(text).at(-1)!.error.type).toBe('api_error');
    await expect(stream.finalMessage()).rejects.toBeInstanceOf(APIError);
  });
});

describe('anthropicErrorType', () => {
  it.each([
    [400, 'invalid_request_error'],
    [401, 'authentication_error'],
    [402, 'billing_error'],
    [403, 'permission_error'],
    [404, 'not_found_error'],
    [409, 'invalid_request_error'],
    [413, 'request_too_large'],
    [429, 'rate_limit_error'],
    [500, 'api_error'],
    [502, 'api_error'],
    [503, 'overloaded_error'],
    [504, 'timeout_error'],
    [529, 'overloaded_error'],
  ])('maps %i to %s', (status, type) => {
    expect(anthropicErrorType(status)).toBe(type);
  });
});
