import { APIError } from 'openai';
import { describe, expect, it } from 'vitest';
import { GatewayError, type GatewayError as GatewayErrorType } from '../../src/errors.js';
import type { IRResponse, IRStreamEvent } from '../../src/protocols/ir.js';
import { decodeResponsesRequest } from '../../src/protocols/responses/decode-request.js';
import { encodeResponsesResponse } from '../../src/protocols/responses/encode-response.js';
import { encodeResponsesStream } from '../../src/protocols/responses/encode-stream.js';
import { replayableReasoning } from '../../src/protocols/responses/reasoning-opaque.js';
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
        {
          type: 'reasoning',
          id: 'rs_1',
          summary: [
            { type: 'summary_text', text: 'a' },
            { type: 'summary_text', text: 'b' },
          ],
          encrypted_content: 'ENC',
        },
        { type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'I will call', annotations: [] }] },
        { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'f', arguments: '{"x":1}' },
        { type: 'function_call', id: 'fc_2', call_id: 'call_2', name: 'g', arguments: '' },
        { type: 'function_call_output', call_id: 'call_1', output: 'one' },
        {
          type: 'function_call_output',
          call_id: 'call_2',
          output: [
            { type: 'input_text', text: 'two' },
            { type: 'input_image', image_url: 'data:image/jpeg;base64,QUJD' },
          ],
        },
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
          { type: 'image', url: 'https://x.test/i.png', detail: 'high', param: 'input[1].content[1].image_url' },
          { type: 'file', data: 'JVBE', mediaType: 'application/pdf', filename: 'f.pdf' },
          { type: 'file', fileId: 'file_1', param: 'input[1].content[3].file_id' },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'a\n\nb', id: 'rs_1', encrypted: 'ENC' },
          { type: 'text', text: 'I will call' },
          { type: 'tool_call', id: 'call_1', name: 'f', arguments: '{"x":1}', param: 'input[4].arguments' },
          { type: 'tool_call', id: 'call_2', name: 'g', arguments: '', param: 'input[5].arguments' },
        ],
      },
      { role: 'tool', toolCallId: 'call_1', content: [{ type: 'text', text: 'one' }], param: 'input[6].call_id' },
      {
        role: 'tool',
        toolCallId: 'call_2',
        content: [
          { type: 'text', text: 'two' },
          { type: 'image', data: 'QUJD', mediaType: 'image/jpeg' },
        ],
        param: 'input[7].call_id',
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
    expect(ir.tools).toEqual([{ name: 'f', description: 'd', parameters: { type: 'object' }, schemaField: 'tools[0].parameters', strict: false }]);
    expect(ir.toolChoice).toEqual({ type: 'tool', name: 'f', parallel: true });
    expect(ir.parallelToolCalls).toBe(true);
    expect(ir.maxOutputTokens).toBe(64);
    expect(ir.temperature).toBe(0.2);
    expect(ir.topP).toBe(0.8);
    expect(ir.reasoning).toEqual({ effort: 'low', summary: 'auto' });
    expect(ir.responseFormat).toEqual({ type: 'json_schema', name: 'out', schema: { type: 'object' }, schemaField: 'text.format.schema', strict: true });
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

  it("accepts truncation 'auto' (the Agents SDK sends it), sends it nowhere and echoes it", () => {
    const request = { model: 'public-model', input: 'x', truncation: 'auto' };
    const ir = decode(request);
    expect(JSON.stringify(ir)).not.toContain('truncation');
    const encoded = encodeResponsesResponse(
      { id: 'r1', model: 'm', created: 1, content: [{ type: 'text', text: 'hi' }], finishReason: 'stop', usage: {} },
      makeCtx(request),
    );
    expect(encoded.truncation).toBe('auto');
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
    const body = encodeResponsesResponse({ ...response, content: [{ type: 'text', text: 'cut' }], finishReason: 'length' }, makeCtx(request)) as any;
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
    const { text, stream } = await streamThroughSdk([start, { type: 'text_delta', text: 'trunc' }, { type: 'finish', reason: 'length', usage: { output: 1 } }]);
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

describe('tool kinds of the Responses API on upstreams with functions only', () => {
  const spawn = {
    type: 'function',
    name: 'spawn_agent',
    description: 'Spawn',
    parameters: { type: 'object', properties: { task: { type: 'string' } } },
    strict: false,
  };
  const agents = { type: 'namespace', name: 'multi_agent_v1', description: 'Sub-agents', tools: [spawn, { type: 'function', name: 'wait_agent' }] };
  const grammar = { type: 'grammar', syntax: 'lark', definition: 'start: "*** Begin Patch" LF' };
  const applyPatch = { type: 'custom', name: 'apply_patch', description: 'Edit files. FREEFORM.', format: grammar };
  const toolSearch = {
    type: 'tool_search',
    execution: 'client',
    description: 'Find tools',
    parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
  };
  const codexTools = [
    { type: 'function', name: 'exec_command', parameters: { type: 'object' } },
    agents,
    applyPatch,
    toolSearch,
    { type: 'web_search', external_web_access: false },
  ];

  it('flattens namespaces, turns custom and client tool_search tools into functions, and drops hosted tools', () => {
    const ir = decode({ input: 'x', tools: codexTools, tool_choice: 'auto' });
    expect(ir.tools!.map((tool) => tool.name)).toEqual([
      'exec_command',
      'multi_agent_v1__spawn_agent',
      'multi_agent_v1__wait_agent',
      'apply_patch',
      'tool_search',
    ]);
    expect(ir.tools![1]).toEqual({
      name: 'multi_agent_v1__spawn_agent',
      description: 'Spawn',
      parameters: spawn.parameters,
      schemaField: 'tools[1].tools[0].parameters',
      strict: false,
    });
    const patch = ir.tools![3]!;
    expect(patch.parameters).toEqual({
      type: 'object',
      properties: { input: { type: 'string', description: expect.any(String) } },
      required: ['input'],
      additionalProperties: false,
    });
    expect(patch.description).toContain('Edit files. FREEFORM.');
    expect(patch.description).toContain('lark grammar');
    expect(patch.description).toContain(grammar.definition);
    expect(ir.tools![4]).toEqual({ name: 'tool_search', description: 'Find tools', parameters: toolSearch.parameters, schemaField: 'tools[3].parameters' });
    expect(ir.droppedTools).toEqual(['web_search']);
    expect(ir.toolChoice).toEqual({ type: 'auto' });
  });

  it('keeps flat names within 64 characters and distinct from every other tool', () => {
    const long = 'mcp__a_very_long_server_name_that_goes_on_and_on';
    const ir = decode({
      input: 'x',
      tools: [
        { type: 'function', name: 'ns__f' },
        { type: 'namespace', name: 'ns', tools: [{ type: 'function', name: 'f' }] },
        {
          type: 'namespace',
          name: long,
          tools: [
            { type: 'function', name: 'create_calendar_event' },
            { type: 'function', name: 'create_calendar_event_2' },
          ],
        },
      ],
    });
    const names = ir.tools!.map((tool) => tool.name);
    expect(names[0]).toBe('ns__f');
    expect(new Set(names).size).toBe(4);
    for (const name of names) expect(name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
    // The same request decodes to the same names: the mapping holds across turns.
    expect(
      decode({
        input: 'x',
        tools: [{ type: 'function', name: 'ns__f' }, ...[{ type: 'namespace', name: 'ns', tools: [{ type: 'function', name: 'f' }] }]],
      }).tools!.map((t) => t.name),
    ).toEqual(names.slice(0, 2));
  });

  it('leaves a client function its own name when a built-in tool would take it', () => {
    const ir = decode({
      input: [
        { type: 'tool_search_call', call_id: 'call_1', execution: 'client', arguments: { query: 'q' } },
        { type: 'tool_search_output', call_id: 'call_1', execution: 'client', status: 'completed', tools: [] },
      ],
      tools: [toolSearch, { type: 'function', name: 'tool_search', parameters: { type: 'object' } }],
    });
    const [search, own] = ir.tools!;
    expect(own!.name).toBe('tool_search');
    expect(search!.name).toMatch(/^tool_search__[0-9a-f]{10}$/);
    expect(ir.messages[0]).toMatchObject({ role: 'assistant', content: [{ type: 'tool_call', name: search!.name }] });
    const body = encodeResponsesResponse(
      {
        id: 'x',
        model: 'm',
        created: 1,
        finishReason: 'tool_calls',
        usage: {},
        content: [
          { type: 'tool_call', id: 'c', name: search!.name, arguments: '{}' },
          { type: 'tool_call', id: 'd', name: 'tool_search', arguments: '{}' },
        ],
      },
      makeCtx({ input: 'x', tools: [toolSearch, { type: 'function', name: 'tool_search' }] }),
    ) as any;
    expect(body.output.map((item: any) => item.type)).toEqual(['tool_search_call', 'function_call']);
  });

  it('replays namespaced, custom, tool search and local shell history as function calls and results', () => {
    const loaded = {
      type: 'namespace',
      name: 'mcp__cal',
      description: 'Calendar',
      tools: [{ type: 'function', name: 'create_event', parameters: { type: 'object' }, defer_loading: true }],
    };
    const ir = decode({
      tools: [...codexTools, { type: 'local_shell' }],
      input: [
        { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'You are Codex.' }] },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'go' }] },
        { type: 'function_call', name: 'spawn_agent', namespace: 'multi_agent_v1', arguments: '{"task":"t"}', call_id: 'call_1' },
        { type: 'function_call_output', call_id: 'call_1', output: 'spawned' },
        { type: 'custom_tool_call', id: 'ctc_1', status: 'completed', call_id: 'call_2', name: 'apply_patch', input: '*** Begin Patch\n*** End Patch\n' },
        { type: 'custom_tool_call_output', call_id: 'call_2', output: 'Done!' },
        { type: 'tool_search_call', call_id: 'call_3', execution: 'client', status: 'completed', arguments: { query: 'calendar' } },
        { type: 'tool_search_output', call_id: 'call_3', execution: 'client', status: 'completed', tools: [loaded] },
        {
          type: 'local_shell_call',
          call_id: 'call_4',
          status: 'completed',
          action: { type: 'exec', command: ['ls', '-l'], working_directory: '/tmp', timeout_ms: 1000, env: null, user: null },
        },
        { type: 'function_call_output', call_id: 'call_4', output: 'total 0' },
        { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: 'q' } },
      ],
    });
    expect(ir.system).toEqual([{ type: 'text', text: 'You are Codex.' }]);
    const calls = ir.messages.flatMap((m) => (m.role === 'assistant' ? m.content : []));
    expect(calls).toEqual([
      { type: 'tool_call', id: 'call_1', name: 'multi_agent_v1__spawn_agent', arguments: '{"task":"t"}', param: 'input[2].arguments' },
      { type: 'tool_call', id: 'call_2', name: 'apply_patch', arguments: JSON.stringify({ input: '*** Begin Patch\n*** End Patch\n' }) },
      { type: 'tool_call', id: 'call_3', name: 'tool_search', arguments: '{"query":"calendar"}' },
      { type: 'tool_call', id: 'call_4', name: 'local_shell', arguments: '{"command":["ls","-l"],"workdir":"/tmp","timeout_ms":1000}' },
    ]);
    const results = ir.messages.filter((m) => m.role === 'tool');
    expect(results.map((m) => [m.toolCallId, m.content])).toEqual([
      ['call_1', [{ type: 'text', text: 'spawned' }]],
      ['call_2', [{ type: 'text', text: 'Done!' }]],
      ['call_3', [{ type: 'text', text: 'Tools now available: mcp__cal__create_event.' }]],
      ['call_4', [{ type: 'text', text: 'total 0' }]],
    ]);
    // What the search loaded is offered from now on.
    expect(ir.tools!.map((t) => t.name)).toContain('mcp__cal__create_event');
    expect(ir.tools!.find((t) => t.name === 'local_shell')!.parameters).toMatchObject({ required: ['command'] });
  });

  it('forces a custom or namespaced tool by its flat name, and refuses to force a hosted one', () => {
    expect(decode({ input: 'x', tools: codexTools, tool_choice: { type: 'custom', name: 'apply_patch' } }).toolChoice).toEqual({
      type: 'tool',
      name: 'apply_patch',
    });
    expect(decode({ input: 'x', tools: codexTools, tool_choice: { type: 'function', name: 'wait_agent', namespace: 'multi_agent_v1' } }).toolChoice).toEqual({
      type: 'tool',
      name: 'multi_agent_v1__wait_agent',
    });
    const error = decodeError({ input: 'x', tools: codexTools, tool_choice: { type: 'web_search' } });
    expect(error.param).toBe('tool_choice.type');
    expect(error.message).toContain('web_search');
  });

  it('drops a search the provider would run, offering its deferred tools directly', () => {
    const ir = decode({ input: 'x', tools: [{ type: 'tool_search' }, { type: 'function', name: 'later', defer_loading: true }] });
    expect(ir.tools!.map((t) => t.name)).toEqual(['later']);
    expect(ir.droppedTools).toEqual(['tool_search']);
  });

  const ctx = () => makeCtx({ model: 'public-model', input: 'x', tools: [...codexTools, { type: 'local_shell' }] });

  it('answers calls as the items the client offered the tools as', () => {
    const body = encodeResponsesResponse(
      {
        id: 'x',
        model: 'upstream',
        created: 1700000000,
        content: [
          { type: 'tool_call', id: 'call_a', name: 'multi_agent_v1__spawn_agent', arguments: '{"task":"t"}' },
          { type: 'tool_call', id: 'call_b', name: 'apply_patch', arguments: JSON.stringify({ input: '*** Begin Patch\n' }) },
          { type: 'tool_call', id: 'call_c', name: 'tool_search', arguments: '{"query":"calendar","limit":2}' },
          { type: 'tool_call', id: 'call_d', name: 'local_shell', arguments: '{"command":["ls"],"workdir":"/w"}' },
          { type: 'tool_call', id: 'call_e', name: 'exec_command', arguments: '{}' },
        ],
        finishReason: 'tool_calls',
        usage: {},
      },
      ctx(),
    ) as any;
    const [spawnCall, patchCall, searchCall, shellCall, execCall] = body.output;
    expect(spawnCall).toMatchObject({ type: 'function_call', name: 'spawn_agent', namespace: 'multi_agent_v1', call_id: 'call_a', arguments: '{"task":"t"}' });
    expect(spawnCall.id).toMatch(/^fc_/);
    expect(patchCall).toMatchObject({ type: 'custom_tool_call', name: 'apply_patch', call_id: 'call_b', input: '*** Begin Patch\n', status: 'completed' });
    expect(patchCall.id).toMatch(/^ctc_/);
    expect(searchCall).toMatchObject({
      type: 'tool_search_call',
      call_id: 'call_c',
      execution: 'client',
      status: 'completed',
      arguments: { query: 'calendar', limit: 2 },
    });
    expect(shellCall).toMatchObject({
      type: 'local_shell_call',
      call_id: 'call_d',
      status: 'completed',
      action: { type: 'exec', command: ['ls'], working_directory: '/w' },
    });
    expect(execCall).toMatchObject({ type: 'function_call', name: 'exec_command' });
    // What the client reads: the JSON text, where an absent namespace has no key.
    expect('namespace' in JSON.parse(JSON.stringify(execCall))).toBe(false);
    // Usage counters Codex reads are there even when the upstream reported none.
    expect(body.usage).toEqual({
      input_tokens: 0,
      input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
      output_tokens: 0,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 0,
    });
  });

  it('streams a custom tool call as custom_tool_call_input deltas of the raw text', async () => {
    // As a model writes it: escaped newlines and quotes, a non-ASCII letter as a \u escape.
    const args = String.raw`{"input": "*** Begin Patch\n*** Add File: a \"b\".txt\n+\u00e9\n*** End Patch\n"}`;
    // Fragments that split the opening, an escape and a \u sequence.
    const cuts = [3, 12, 30, 31, args.indexOf('\\u') + 3, args.length - 2];
    const fragments = cuts.map((end, i) => args.slice(i === 0 ? 0 : cuts[i - 1], end)).concat(args.slice(cuts.at(-1)));
    const text = await collect(
      encodeResponsesStream(
        irStream([
          start,
          { type: 'tool_call_start', id: 'call_p', name: 'apply_patch' },
          ...fragments.map((fragment): IRStreamEvent => ({ type: 'tool_call_delta', arguments: fragment })),
          { type: 'tool_call_start', id: 'call_s', name: 'multi_agent_v1__wait_agent' },
          { type: 'tool_call_delta', arguments: '{}' },
          { type: 'finish', reason: 'tool_calls' },
        ]),
        ctx(),
      ),
    );
    const events = checkResponsesStream(text);
    const deltas = events.filter((e) => e.type === 'response.custom_tool_call_input.delta');
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.map((e) => e.delta).join('')).toBe('*** Begin Patch\n*** Add File: a "b".txt\n+é\n*** End Patch\n');
    const final = events.at(-1)!.response.output;
    expect(final[0]).toMatchObject({
      type: 'custom_tool_call',
      call_id: 'call_p',
      name: 'apply_patch',
      input: '*** Begin Patch\n*** Add File: a "b".txt\n+é\n*** End Patch\n',
    });
    expect(final[1]).toMatchObject({ type: 'function_call', call_id: 'call_s', name: 'wait_agent', namespace: 'multi_agent_v1', arguments: '{}' });
    expect(events.find((e) => e.type === 'response.function_call_arguments.done')).toMatchObject({ name: 'wait_agent' });
  });

  it('streams a tool search call whole, with its arguments as an object', async () => {
    const text = await collect(
      encodeResponsesStream(
        irStream([
          start,
          { type: 'tool_call_start', id: 'call_t', name: 'tool_search' },
          { type: 'tool_call_delta', arguments: '{"query":' },
          { type: 'tool_call_delta', arguments: '"calendar"}' },
          { type: 'finish', reason: 'tool_calls' },
        ]),
        ctx(),
      ),
    );
    const events = checkResponsesStream(text);
    expect(events.some((e) => e.type.startsWith('response.function_call_arguments'))).toBe(false);
    expect(events.find((e) => e.type === 'response.output_item.done')!.item).toMatchObject({
      type: 'tool_search_call',
      call_id: 'call_t',
      execution: 'client',
      status: 'completed',
      arguments: { query: 'calendar' },
    });
  });
});

describe('reasoning an OpenAI upstream cannot take back', () => {
  const signed = { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'infergate-signature:SIG' };
  const openai = { type: 'reasoning', id: 'rs_2', summary: [], encrypted_content: 'gAAAAAB' };
  const bare = { type: 'reasoning', id: 'rs_3', summary: [{ type: 'summary_text', text: 'local thought' }], encrypted_content: null };
  const message = { role: 'user', content: 'hi' };

  it('is left out of a passthrough body: Claude signatures always, items without content when nothing is stored', () => {
    expect(replayableReasoning([signed, openai, bare, message], false)).toEqual([openai, message]);
    expect(replayableReasoning([signed, openai, bare, message], true)).toEqual([openai, bare, message]);
    const untouched = [openai, message];
    expect(replayableReasoning(untouched, false)).toBe(untouched);
  });
});
