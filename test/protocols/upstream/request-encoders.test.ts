import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../../src/errors.js';
import { encodeChatRequest } from '../../../src/protocols/chat/encode-request.js';
import type { IRRequest, IRTool } from '../../../src/protocols/ir.js';
import { anthropicToolId, encodeMessagesRequest } from '../../../src/protocols/messages/encode-request.js';
import { encodeResponsesRequest } from '../../../src/protocols/responses/encode-request.js';

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
const PDF = 'JVBERi0xLjQKJcfsj6IK';
const weatherSchema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
const tools: IRTool[] = [{ name: 'get_weather', description: 'Current weather', parameters: weatherSchema }, { name: 'get_time' }];

function ir(extra: Partial<IRRequest>): IRRequest {
  return { model: 'upstream-model', system: [], messages: [], stream: false, passthrough: {}, ...extra };
}

/** A finished tool round with two parallel calls (one id Anthropic would reject) and a follow-up question. */
const toolLoop = ir({
  system: [{ type: 'text', text: 'You are terse.' }],
  messages: [
    { role: 'user', content: [{ type: 'text', text: 'Weather and time in Paris?' }] },
    {
      role: 'assistant',
      content: [
        { type: 'reasoning', text: 'Two tools.', signature: 'sig-1' },
        { type: 'text', text: 'Checking.' },
        { type: 'tool_call', id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { type: 'tool_call', id: 'call.2', name: 'get_time', arguments: '' },
      ],
    },
    { role: 'tool', toolCallId: 'call_1', content: [{ type: 'text', text: '18°C' }] },
    { role: 'tool', toolCallId: 'call.2', content: [{ type: 'text', text: 'clock broke' }], isError: true },
    { role: 'user', content: [{ type: 'text', text: 'Thanks, and tomorrow?' }] },
  ],
  tools,
  toolChoice: { type: 'auto' },
  parallelToolCalls: false,
  maxOutputTokens: 500,
  temperature: 1.5,
  stream: true,
  passthrough: { prompt_cache_key: 'conv-1', service_tier: 'flex' },
});

/** Images by URL, by data URL (declared JPEG, actually PNG) and by data; a PDF; an image returned by a tool. */
const media = ir({
  messages: [
    {
      role: 'user',
      content: [
        { type: 'text', text: 'Compare these.' },
        { type: 'image', url: 'https://example.com/cat.png', detail: 'high' },
        { type: 'image', url: `data:image/jpeg;base64,${PNG}` },
        { type: 'image', data: PNG, mediaType: 'image/png' },
        { type: 'file', data: PDF, mediaType: 'application/pdf', filename: 'report.pdf' },
      ],
    },
    { role: 'assistant', content: [{ type: 'tool_call', id: 'call_img', name: 'screenshot', arguments: '{}' }] },
    {
      role: 'tool',
      toolCallId: 'call_img',
      content: [
        { type: 'text', text: 'Here it is' },
        { type: 'image', data: PNG, mediaType: 'image/png' },
      ],
    },
  ],
});

/** Cache breakpoints on the system prompt, a tool and a user block. */
const cached = ir({
  system: [
    { type: 'text', text: 'Big shared context', cacheControl: { type: 'ephemeral' } },
    { type: 'text', text: 'Rules' },
  ],
  messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi', cacheControl: { type: 'ephemeral', ttl: '1h' } }] }],
  tools: [{ ...tools[0]!, cacheControl: { type: 'ephemeral' } }],
});

/** Reasoning by effort, with sampling settings thinking forbids, structured output and a user id. */
const reasoning = ir({
  messages: [{ role: 'user', content: [{ type: 'text', text: 'Solve it.' }] }],
  reasoning: { effort: 'high', summary: 'auto' },
  temperature: 0.2,
  topP: 0.5,
  responseFormat: { type: 'json_schema', name: 'answer', schema: { type: 'object', properties: { x: { type: 'number' } } }, strict: true },
  user: 'u-42',
  passthrough: { seed: 7 },
});

describe('encodeChatRequest', () => {
  it('encodes a multi-turn tool loop with parallel calls', () => {
    expect(encodeChatRequest(toolLoop)).toEqual({
      prompt_cache_key: 'conv-1',
      service_tier: 'flex',
      model: 'upstream-model',
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: 'Weather and time in Paris?' },
        {
          role: 'assistant',
          content: 'Checking.',
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            { id: 'call.2', type: 'function', function: { name: 'get_time', arguments: '{}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: '18°C' },
        { role: 'tool', tool_call_id: 'call.2', content: 'Error: clock broke' },
        { role: 'user', content: 'Thanks, and tomorrow?' },
      ],
      tools: [
        { type: 'function', function: { name: 'get_weather', description: 'Current weather', parameters: weatherSchema } },
        { type: 'function', function: { name: 'get_time' } },
      ],
      tool_choice: 'auto',
      parallel_tool_calls: false,
      max_completion_tokens: 500,
      temperature: 1.5,
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it('encodes images and files, moving tool-output images into a user message after the tool results', () => {
    expect(encodeChatRequest(media).messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Compare these.' },
          { type: 'image_url', image_url: { url: 'https://example.com/cat.png', detail: 'high' } },
          { type: 'image_url', image_url: { url: `data:image/jpeg;base64,${PNG}` } },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
          { type: 'file', file: { file_data: `data:application/pdf;base64,${PDF}`, filename: 'report.pdf' } },
        ],
      },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_img', type: 'function', function: { name: 'screenshot', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'call_img', content: 'Here it is' },
      { role: 'user', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } }] },
    ]);
  });

  it('joins the system prompt and drops cache_control', () => {
    const body = encodeChatRequest(cached);
    expect(body.messages).toEqual([
      { role: 'system', content: 'Big shared context\n\nRules' },
      { role: 'user', content: 'Hi' },
    ]);
    expect(JSON.stringify(body)).not.toContain('cache');
  });

  it('encodes reasoning effort, nested json_schema, passthrough and a non-streaming body', () => {
    expect(encodeChatRequest(reasoning)).toEqual({
      seed: 7,
      model: 'upstream-model',
      messages: [{ role: 'user', content: 'Solve it.' }],
      reasoning_effort: 'high',
      temperature: 0.2,
      top_p: 0.5,
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'answer', schema: { type: 'object', properties: { x: { type: 'number' } } }, strict: true },
      },
      user: 'u-42',
      stream: false,
    });
  });

  it('maps a thinking budget to the nearest effort and keeps caller stream_options', () => {
    const body = encodeChatRequest(ir({ reasoning: { budgetTokens: 6000 }, stream: true, passthrough: { stream_options: { include_obfuscation: false } } }));
    expect(body.reasoning_effort).toBe('medium');
    expect(body.stream_options).toEqual({ include_obfuscation: false, include_usage: true });
  });

  it('drops the Responses-only include, which Chat would reject', () => {
    expect(encodeChatRequest(ir({ passthrough: { include: ['reasoning.encrypted_content'], store: false } }))).not.toHaveProperty('include');
  });

  it('sends metadata only with store, which OpenAI requires for it', () => {
    expect(encodeChatRequest(ir({ metadata: { a: '1' } }))).not.toHaveProperty('metadata');
    expect(encodeChatRequest(ir({ metadata: { a: '1' }, passthrough: { store: true } }))).toMatchObject({ metadata: { a: '1' }, store: true });
  });

  it('rejects a file given only by URL', () => {
    const request = ir({ messages: [{ role: 'user', content: [{ type: 'file', url: 'https://example.com/a.pdf' }] }] });
    expect(() => encodeChatRequest(request)).toThrow(expect.objectContaining({ status: 400 }));
  });
});

describe('encodeResponsesRequest', () => {
  it('encodes a multi-turn tool loop as input items', () => {
    expect(encodeResponsesRequest(toolLoop)).toEqual({
      prompt_cache_key: 'conv-1',
      service_tier: 'flex',
      model: 'upstream-model',
      instructions: 'You are terse.',
      input: [
        { role: 'user', content: [{ type: 'input_text', text: 'Weather and time in Paris?' }] },
        // Claude's signed thinking cannot be replayed to OpenAI: dropped.
        { role: 'assistant', content: [{ type: 'output_text', text: 'Checking.', annotations: [] }] },
        { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { type: 'function_call', call_id: 'call.2', name: 'get_time', arguments: '{}' },
        { type: 'function_call_output', call_id: 'call_1', output: '18°C' },
        { type: 'function_call_output', call_id: 'call.2', output: 'Error: clock broke' },
        { role: 'user', content: [{ type: 'input_text', text: 'Thanks, and tomorrow?' }] },
      ],
      tools: [
        { type: 'function', name: 'get_weather', description: 'Current weather', parameters: weatherSchema, strict: false },
        { type: 'function', name: 'get_time', parameters: { type: 'object', properties: {} }, strict: false },
      ],
      tool_choice: 'auto',
      parallel_tool_calls: false,
      max_output_tokens: 500,
      temperature: 1.5,
      stream: true,
    });
  });

  it('encodes images and files, keeping tool-output images in the function_call_output', () => {
    expect(encodeResponsesRequest(media).input).toEqual([
      {
        role: 'user',
        content: [
          { type: 'input_text', text: 'Compare these.' },
          { type: 'input_image', image_url: 'https://example.com/cat.png', detail: 'high' },
          { type: 'input_image', image_url: `data:image/jpeg;base64,${PNG}`, detail: 'auto' },
          { type: 'input_image', image_url: `data:image/png;base64,${PNG}`, detail: 'auto' },
          { type: 'input_file', file_data: `data:application/pdf;base64,${PDF}`, filename: 'report.pdf' },
        ],
      },
      { type: 'function_call', call_id: 'call_img', name: 'screenshot', arguments: '{}' },
      {
        type: 'function_call_output',
        call_id: 'call_img',
        output: [
          { type: 'input_text', text: 'Here it is' },
          { type: 'input_image', image_url: `data:image/png;base64,${PNG}`, detail: 'auto' },
        ],
      },
    ]);
  });

  it('replays OpenAI reasoning items in place and drops plain reasoning text', () => {
    const body = encodeResponsesRequest(
      ir({
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'Go' }] },
          {
            role: 'assistant',
            content: [
              { type: 'reasoning', text: 'Plan', id: 'rs_1', encrypted: 'enc' },
              { type: 'tool_call', id: 'call_1', name: 'f', arguments: '{}' },
              { type: 'reasoning', text: 'from a chat upstream' },
              { type: 'text', text: 'Done' },
              { type: 'refusal', refusal: 'But not that.' },
            ],
          },
        ],
      }),
    );
    expect(body.input).toEqual([
      { role: 'user', content: [{ type: 'input_text', text: 'Go' }] },
      { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'Plan' }], encrypted_content: 'enc' },
      { type: 'function_call', call_id: 'call_1', name: 'f', arguments: '{}' },
      {
        role: 'assistant',
        content: [
          { type: 'output_text', text: 'Done', annotations: [] },
          { type: 'refusal', refusal: 'But not that.' },
        ],
      },
    ]);
  });

  it('with store: false replays reasoning by its encrypted content only', () => {
    const body = encodeResponsesRequest(
      ir({
        passthrough: { store: false },
        messages: [
          {
            role: 'assistant',
            content: [
              { type: 'reasoning', text: '', id: 'rs_1', encrypted: 'enc' },
              { type: 'reasoning', text: 'stored only', id: 'rs_2' },
            ],
          },
        ],
      }),
    );
    expect(body.input).toEqual([{ type: 'reasoning', summary: [], encrypted_content: 'enc' }]);
    expect(body.store).toBe(false);
  });

  it('encodes reasoning, flat json_schema text format and tool choice by name', () => {
    const body = encodeResponsesRequest({ ...reasoning, passthrough: {}, tools, toolChoice: { type: 'tool', name: 'get_weather' } });
    expect(body).toMatchObject({
      reasoning: { effort: 'high', summary: 'auto' },
      text: { format: { type: 'json_schema', name: 'answer', schema: { type: 'object', properties: { x: { type: 'number' } } }, strict: true } },
      tool_choice: { type: 'function', name: 'get_weather' },
      temperature: 0.2,
      top_p: 0.5,
      user: 'u-42',
      stream: false,
    });
    expect(body).not.toHaveProperty('instructions');
  });

  it('keeps only the stream options Responses understands', () => {
    const streaming = encodeResponsesRequest(ir({ stream: true, passthrough: { stream_options: { include_usage: true, include_obfuscation: false } } }));
    expect(streaming.stream_options).toEqual({ include_obfuscation: false });
    expect(encodeResponsesRequest(ir({ stream: true, passthrough: { stream_options: { include_usage: true } } }))).not.toHaveProperty('stream_options');
  });

  it('drops the Chat-only passthrough fields Responses would reject and moves verbosity under text', () => {
    const passthrough = {
      seed: 7,
      logit_bias: { '1': -100 },
      frequency_penalty: 0.5,
      presence_penalty: 0.1,
      prediction: { type: 'content', content: 'x' },
      verbosity: 'low',
      prompt_cache_key: 'k',
      service_tier: 'flex',
    };
    const body = encodeResponsesRequest(ir({ passthrough, responseFormat: { type: 'json_object' } }));
    for (const field of ['seed', 'logit_bias', 'frequency_penalty', 'presence_penalty', 'prediction', 'verbosity']) expect(body).not.toHaveProperty(field);
    expect(body).toMatchObject({ prompt_cache_key: 'k', service_tier: 'flex', text: { format: { type: 'json_object' }, verbosity: 'low' } });
  });

  it('rejects stop sequences, which Responses cannot express', () => {
    expect(() => encodeResponsesRequest(ir({ stop: ['###'] }))).toThrow(GatewayError);
    expect(() => encodeResponsesRequest(ir({ stop: ['###'] }))).toThrow(expect.objectContaining({ status: 400 }));
  });
});

describe('encodeMessagesRequest', () => {
  it('encodes a multi-turn tool loop: signed thinking kept, tool results in one user turn, ids sanitized', () => {
    const body = encodeMessagesRequest(toolLoop);
    const sanitized = anthropicToolId('call.2');
    expect(sanitized).toMatch(/^call_2_[0-9a-f]{12}$/);
    expect(body).toEqual({
      model: 'upstream-model',
      system: 'You are terse.',
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Weather and time in Paris?' }] },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'Two tools.', signature: 'sig-1' },
            { type: 'text', text: 'Checking.' },
            { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } },
            { type: 'tool_use', id: sanitized, name: 'get_time', input: {} },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'call_1', content: [{ type: 'text', text: '18°C' }] },
            { type: 'tool_result', tool_use_id: sanitized, content: [{ type: 'text', text: 'clock broke' }], is_error: true },
            { type: 'text', text: 'Thanks, and tomorrow?' },
          ],
        },
      ],
      max_tokens: 500,
      temperature: 1,
      tools: [
        { name: 'get_weather', description: 'Current weather', input_schema: weatherSchema },
        { name: 'get_time', input_schema: { type: 'object', properties: {} } },
      ],
      tool_choice: { type: 'auto', disable_parallel_tool_use: true },
      stream: true,
    });
  });

  it('encodes images (url, data URL with sniffed type, data), a PDF and a tool-output image', () => {
    expect(encodeMessagesRequest(media).messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Compare these.' },
          { type: 'image', source: { type: 'url', url: 'https://example.com/cat.png' } },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
          { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: PDF }, title: 'report.pdf' },
        ],
      },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'call_img', name: 'screenshot', input: {} }] },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'call_img',
            content: [
              { type: 'text', text: 'Here it is' },
              { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
            ],
          },
        ],
      },
    ]);
  });

  it('keeps cache_control on system blocks, tools and message blocks', () => {
    const body = encodeMessagesRequest(cached);
    expect(body.system).toEqual([
      { type: 'text', text: 'Big shared context', cache_control: { type: 'ephemeral' } },
      { type: 'text', text: 'Rules' },
    ]);
    expect(body.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'Hi', cache_control: { type: 'ephemeral', ttl: '1h' } }] }]);
    expect(body.tools).toEqual([{ name: 'get_weather', description: 'Current weather', input_schema: weatherSchema, cache_control: { type: 'ephemeral' } }]);
  });

  it('turns an effort into a thinking budget below max_tokens and drops sampling settings thinking forbids', () => {
    expect(encodeMessagesRequest(reasoning)).toEqual({
      model: 'upstream-model',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Solve it.' }] }],
      thinking: { type: 'enabled', budget_tokens: 16384 },
      max_tokens: 4096 + 16384,
      output_config: { format: { type: 'json_schema', schema: { type: 'object', properties: { x: { type: 'number' } } } } },
      metadata: { user_id: 'u-42' },
      stream: false,
    });
  });

  it('uses an explicit budget, the default max_tokens option, top_k and stop sequences', () => {
    const withBudget = encodeMessagesRequest(ir({ reasoning: { budgetTokens: 2000 }, maxOutputTokens: 8000 }));
    expect(withBudget).toMatchObject({ thinking: { type: 'enabled', budget_tokens: 2000 }, max_tokens: 8000 });
    const plain = encodeMessagesRequest(ir({ temperature: -1, topP: 0.9, topK: 40, stop: ['###', ''], passthrough: { seed: 1, prompt_cache_key: 'k' } }), {
      defaultMaxTokens: 1024,
    });
    expect(plain).toEqual({
      model: 'upstream-model',
      messages: [],
      max_tokens: 1024,
      temperature: 0,
      top_p: 0.9,
      top_k: 40,
      stop_sequences: ['###'],
      stream: false,
    });
  });

  it('merges same-role turns, hoists system messages, drops reasoning Claude did not sign and trims a prefill', () => {
    const body = encodeMessagesRequest(
      ir({
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'A' }] },
          { role: 'assistant', content: [{ type: 'reasoning', text: 'from a chat upstream' }] },
          { role: 'system', content: [{ type: 'text', text: 'Late rule' }] },
          {
            role: 'user',
            content: [
              { type: 'text', text: '' },
              { type: 'text', text: 'B' },
            ],
          },
          {
            role: 'assistant',
            content: [
              // OpenAI's encrypted reasoning is dropped whatever it looks like; Claude's redacted data is kept.
              { type: 'reasoning', text: '', encrypted: 'gAAAAABopenai-fernet' },
              { type: 'reasoning', text: 'OpenAI summary', encrypted: 'not-a-fernet-token', signature: '' },
              { type: 'reasoning', text: '', redacted: 'redacted-data' },
              { type: 'text', text: 'Sure: ' },
            ],
          },
        ],
        toolChoice: { type: 'required' },
      }),
    );
    expect(body).toEqual({
      model: 'upstream-model',
      system: 'Late rule',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'A' },
            { type: 'text', text: 'B' },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'redacted_thinking', data: 'redacted-data' },
            { type: 'text', text: 'Sure:' },
          ],
        },
      ],
      max_tokens: 4096,
      stream: false,
    });
  });

  it('puts tool results first in a merged user turn, as Anthropic requires', () => {
    const body = encodeMessagesRequest(
      ir({
        messages: [
          { role: 'assistant', content: [{ type: 'tool_call', id: 'toolu_1', name: 'f', arguments: '{"a":1}' }] },
          { role: 'user', content: [{ type: 'text', text: 'Also this note.' }] },
          { role: 'tool', toolCallId: 'toolu_1', content: [] },
        ],
      }),
    );
    expect(body.messages).toEqual([
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'f', input: { a: 1 } }] },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_1' },
          { type: 'text', text: 'Also this note.' },
        ],
      },
    ]);
  });

  it('maps tool choices', () => {
    const choice = (toolChoice: IRRequest['toolChoice'], parallelToolCalls?: boolean) =>
      encodeMessagesRequest(ir({ tools, toolChoice, ...(parallelToolCalls !== undefined ? { parallelToolCalls } : {}) })).tool_choice;
    expect(choice({ type: 'required' })).toEqual({ type: 'any' });
    expect(choice({ type: 'none' })).toEqual({ type: 'none' });
    expect(choice({ type: 'tool', name: 'get_time', parallel: false })).toEqual({ type: 'tool', name: 'get_time', disable_parallel_tool_use: true });
    expect(choice(undefined, false)).toEqual({ type: 'auto', disable_parallel_tool_use: true });
    expect(choice(undefined)).toBeUndefined();
  });

  it('sanitizes tool ids deterministically and without collisions', () => {
    expect(anthropicToolId('toolu_01AbC-x')).toBe('toolu_01AbC-x');
    expect(anthropicToolId('fc:1/2')).toBe(anthropicToolId('fc:1/2'));
    expect(anthropicToolId('fc:1')).not.toBe(anthropicToolId('fc.1'));
    expect(anthropicToolId('fc:1')).toMatch(/^[a-zA-Z0-9_-]+$/);
  });

  it.each([
    ['an SVG image', ir({ messages: [{ role: 'user', content: [{ type: 'image', url: 'data:image/svg+xml;base64,PHN2Zz4=' }] }] })],
    ['an image URL that is neither http nor base64', ir({ messages: [{ role: 'user', content: [{ type: 'image', url: 'ftp://x/y.png' }] }] })],
    ['an OpenAI file id', ir({ messages: [{ role: 'user', content: [{ type: 'file', fileId: 'file-abc' }] }] })],
    ['a spreadsheet', ir({ messages: [{ role: 'user', content: [{ type: 'file', data: 'AAAA', mediaType: 'application/vnd.ms-excel' }] }] })],
  ])('rejects %s with a 400', (_label, request) => {
    expect(() => encodeMessagesRequest(request)).toThrow(GatewayError);
    expect(() => encodeMessagesRequest(request)).toThrow(expect.objectContaining({ status: 400, param: null }));
  });

  it('rejects JSON object mode with a 400 naming the field as the client sent it', () => {
    const request = ir({ responseFormat: { type: 'json_object' }, clientFields: { responseFormat: 'generationConfig.responseMimeType' } });
    expect(() => encodeMessagesRequest(request)).toThrow(expect.objectContaining({ status: 400, param: 'generationConfig.responseMimeType' }));
  });
});

describe('request encoders: what a Messages client (Claude Code) brings', () => {
  const cache = { type: 'ephemeral' };
  /** System text in the conversation, cache breakpoints everywhere, and reasoning of every origin. */
  const claudeCode = ir({
    system: [{ type: 'text', text: 'You are an agent.', cacheControl: cache }],
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'Read secret.txt', cacheControl: cache }] },
      { role: 'system', content: [{ type: 'text', text: '# Environment', cacheControl: cache }] },
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: '', signature: 'claude-sig' },
          { type: 'reasoning', text: '', redacted: 'claude-redacted' },
          { type: 'reasoning', text: 'summary', encrypted: 'openai-enc' },
          { type: 'tool_call', id: 'toolu_1', name: 'Read', arguments: '{"file_path":"/tmp/secret.txt"}', cacheControl: cache },
        ],
      },
      { role: 'tool', toolCallId: 'toolu_1', content: [{ type: 'text', text: 'TOKEN', cacheControl: cache }] },
    ],
    tools: [{ name: 'Read', parameters: weatherSchema, cacheControl: cache }],
    reasoning: { effort: 'max' },
    passthrough: { store: false },
  });

  it('Chat: system messages in place, no cache_control anywhere, the effort as sent, no reasoning replayed', () => {
    const body = encodeChatRequest(claudeCode) as any;
    expect(JSON.stringify(body)).not.toContain('cache');
    expect(body.messages.map((message: any) => message.role)).toEqual(['system', 'user', 'system', 'assistant', 'tool']);
    expect(body.messages[2]).toEqual({ role: 'system', content: '# Environment' });
    expect(body.reasoning_effort).toBe('max');
    expect(JSON.stringify(body)).not.toMatch(/claude-sig|claude-redacted|openai-enc/);
  });

  it('Responses: system messages in place, no cache_control anywhere, only OpenAI reasoning replayed', () => {
    const body = encodeResponsesRequest(claudeCode) as any;
    expect(JSON.stringify(body)).not.toContain('cache');
    expect(body.input.map((item: any) => item.role ?? item.type)).toEqual(['user', 'system', 'reasoning', 'function_call', 'function_call_output']);
    expect(body.input[1]).toEqual({ role: 'system', content: [{ type: 'input_text', text: '# Environment' }] });
    expect(body.input[2]).toEqual({ type: 'reasoning', summary: [{ type: 'summary_text', text: 'summary' }], encrypted_content: 'openai-enc' });
    expect(body.reasoning).toEqual({ effort: 'max' });
  });

  it('Messages: only Claude-signed thinking replayed, at most 4 cache breakpoints (the last ones in prompt order)', () => {
    const body = encodeMessagesRequest(claudeCode) as any;
    const marked: string[] = [];
    const visit = (blocks: any[], where: string) =>
      blocks.forEach((block, i) => {
        if (block.cache_control) marked.push(`${where}[${i}]`);
        if (Array.isArray(block.content)) visit(block.content, `${where}[${i}].content`);
      });
    visit(body.tools, 'tools');
    visit(body.system, 'system');
    body.messages.forEach((message: any, i: number) => {
      visit(message.content, `messages[${i}]`);
    });
    // Six marks sent (tool, two system, user text, tool call, tool result): the first two go.
    expect(marked).toEqual(['system[1]', 'messages[0][0]', 'messages[1][2]', 'messages[2][0].content[0]']);
    expect(body.messages[1].content.slice(0, 2)).toEqual([
      { type: 'thinking', thinking: '', signature: 'claude-sig' },
      { type: 'redacted_thinking', data: 'claude-redacted' },
    ]);
    expect(JSON.stringify(body)).not.toContain('openai-enc');
  });
});
