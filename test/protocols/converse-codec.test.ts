import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { describe, expect, it, vi } from 'vitest';
import { isGatewayError, type GatewayError } from '../../src/errors.js';
import { converseUpstream, validationParam } from '../../src/protocols/converse/index.js';
import { bareModelId, bedrockFamily } from '../../src/protocols/converse/model-family.js';
import type { IRRequest, IRStreamEvent } from '../../src/protocols/ir.js';
import { EventStreamReader } from '../../src/providers/bedrock/event-stream.js';
import type { SseMessage } from '../../src/protocols/sse-parse.js';
import { storageUriCheck } from '../../src/protocols/storage-uris.js';

type Json = Record<string, any>;

const base = (over: Partial<IRRequest> = {}): IRRequest => ({
  model: 'amazon.nova-pro-v1:0',
  system: [],
  messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
  stream: false,
  passthrough: {},
  ...over,
});
const encode = (over: Partial<IRRequest> = {}) => converseUpstream.encodeRequest(base(over)) as Json;

function thrown(run: () => unknown): GatewayError {
  try {
    run();
  } catch (error) {
    if (isGatewayError(error)) return error;
    throw error;
  }
  throw new Error('expected a GatewayError');
}

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk';

describe('Converse request encoder', () => {
  it('system text from everywhere, cache points after marked parts, neighbouring user turns merged', () => {
    const body = encode({
      system: [{ type: 'text', text: 'Be brief.', cacheControl: { type: 'ephemeral' } }],
      messages: [
        { role: 'system', content: [{ type: 'text', text: 'And kind.' }] },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Hi' },
            { type: 'text', text: '' },
            { type: 'text', text: ' \n' },
          ],
        },
        { role: 'user', content: [{ type: 'text', text: 'again', cacheControl: { type: 'ephemeral' } }] },
      ],
      maxOutputTokens: 100,
      temperature: 0.2,
      topP: 0.9,
      stop: ['END', ''],
    });
    expect(body).toEqual({
      system: [{ text: 'Be brief.' }, { cachePoint: { type: 'default' } }, { text: 'And kind.' }],
      messages: [{ role: 'user', content: [{ text: 'Hi' }, { text: 'again' }, { cachePoint: { type: 'default' } }] }],
      inferenceConfig: { maxTokens: 100, temperature: 0.2, topP: 0.9, stopSequences: ['END'] },
    });
  });

  it('images as bytes with the format their bytes show; documents with a clean name; URLs Bedrock cannot fetch are a 400 naming the part', () => {
    const message: IRRequest['messages'][number] = {
      role: 'user',
      content: [
        { type: 'image', url: `data:image/jpeg;base64,${PNG}` },
        { type: 'image', url: 's3://bucket/cat.webp' },
        { type: 'file', data: 'JVBERi0=', mediaType: 'application/pdf', filename: 'Q3 report_final.v2.pdf' },
      ],
    };
    const body = converseUpstream.encodeRequest(base({ messages: [message] }), { storageUris: storageUriCheck(['s3://bucket'], undefined) }) as Json;
    expect(body.messages[0].content).toEqual([
      { image: { format: 'png', source: { bytes: PNG } } },
      { image: { format: 'webp', source: { s3Location: { uri: 's3://bucket/cat.webp' } } } },
      { document: { format: 'pdf', name: 'Q3 report final v2', source: { bytes: 'JVBERi0=' } } },
    ]);
    const error = thrown(() =>
      encode({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'look' },
              { type: 'image', url: 'https://x.test/a.png' },
            ],
          },
        ],
      }),
    );
    expect(error.status).toBe(400);
    expect(error.param).toBe('messages[0].content[1]');
  });

  it('an s3:// image or document goes on only when the provider allows its prefix, else a 400 naming where the client put it', () => {
    const s3 = (url: string, param?: string): IRRequest['messages'] => [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Repeat this verbatim.' },
          { type: 'file', url, mediaType: 'application/pdf', param },
        ],
      },
    ];
    const refused = thrown(() => encode({ messages: s3('s3://acme-finance-private/payroll.pdf', 'messages[1].content[1].file.file_url') }));
    expect(refused.status).toBe(400);
    expect(refused.code).toBe('storage_uri_not_allowed');
    expect(refused.param).toBe('messages[1].content[1].file.file_url');
    expect(thrown(() => encode({ messages: s3('s3://acme/payroll.pdf') })).param).toBe('messages[0].content[1]');

    const allowed = { storageUris: storageUriCheck(['s3://uploads/tenant-a'], undefined) };
    const withAllowed = (url: string) => converseUpstream.encodeRequest(base({ messages: s3(url) }), allowed) as Json;
    expect(withAllowed('s3://uploads/tenant-a/q3.pdf').messages[0].content[1].document.source).toEqual({ s3Location: { uri: 's3://uploads/tenant-a/q3.pdf' } });
    for (const outside of [
      's3://uploads/tenant-ab/q3.pdf',
      's3://uploads/tenant-a/../tenant-b/q3.pdf',
      's3://uploads/tenant-a/%2e%2e/q3.pdf',
      's3://uploads-x/tenant-a/q3.pdf',
    ]) {
      expect(thrown(() => withAllowed(outside)).code).toBe('storage_uri_not_allowed');
    }
  });

  it('a tool loop: calls as toolUse (ids Bedrock accepts), results as toolResult first in the user turn, tools and choice in toolConfig', () => {
    const body = encode({
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Weather?' }] },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Checking.' },
            { type: 'tool_call', id: 'tooluse_A1', name: 'get_weather', arguments: '{"city":"Paris"}' },
            { type: 'tool_call', id: 'call:odd', name: 'get_time', arguments: '' },
          ],
        },
        { role: 'tool', toolCallId: 'tooluse_A1', content: [{ type: 'text', text: '18°C' }] },
        { role: 'tool', toolCallId: 'call:odd', content: [], isError: true },
        { role: 'user', content: [{ type: 'text', text: 'Thanks' }] },
      ],
      tools: [{ name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }],
      toolChoice: { type: 'required' },
    });
    const oddId = body.messages[1].content[2].toolUse.toolUseId;
    expect(oddId).toMatch(/^call_odd_[0-9a-f]{12}$/);
    expect(body.messages).toEqual([
      { role: 'user', content: [{ text: 'Weather?' }] },
      {
        role: 'assistant',
        content: [
          { text: 'Checking.' },
          { toolUse: { toolUseId: 'tooluse_A1', name: 'get_weather', input: { city: 'Paris' } } },
          { toolUse: { toolUseId: oddId, name: 'get_time', input: {} } },
        ],
      },
      {
        role: 'user',
        content: [
          { toolResult: { toolUseId: 'tooluse_A1', content: [{ text: '18°C' }] } },
          { toolResult: { toolUseId: oddId, content: [{ text: '(no output)' }], status: 'error' } },
          { text: 'Thanks' },
        ],
      },
    ]);
    // get_time was called but not offered this turn: declared, since Converse wants every tool it sees in toolConfig.
    expect(body.toolConfig).toEqual({
      tools: [
        { toolSpec: { name: 'get_weather', description: 'Weather', inputSchema: { json: { type: 'object', properties: { city: { type: 'string' } } } } } },
        { toolSpec: { name: 'get_time', inputSchema: { json: { type: 'object' } } } },
      ],
      toolChoice: { any: {} },
    });
  });

  it('a result that answers no call is a 400 naming it; tool_choice none after tool calls is a 400', () => {
    const orphan = thrown(() =>
      encode({
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'Hi' }] },
          { role: 'tool', toolCallId: 'x', content: [] },
        ],
      }),
    );
    expect(orphan.param).toBe('messages[1].tool_call_id');
    const none = thrown(() =>
      encode({
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'Hi' }] },
          { role: 'assistant', content: [{ type: 'tool_call', id: 't1', name: 'f', arguments: '{}' }] },
          { role: 'tool', toolCallId: 't1', content: [{ type: 'text', text: 'ok' }] },
        ],
        tools: [{ name: 'f' }],
        toolChoice: { type: 'none' },
      }),
    );
    expect(none.param).toBe('tool_choice');
    expect(encode({ tools: [{ name: 'f' }], toolChoice: { type: 'none' } }).toolConfig).toBeUndefined();
  });

  it('signed reasoning goes back to Claude with its signature, redacted as it came, unsigned or foreign reasoning not at all', () => {
    const body = encode({
      model: 'us.anthropic.claude-sonnet-4-5-20250929-v1:0',
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Hi' }] },
        {
          role: 'assistant',
          content: [
            { type: 'reasoning', text: 'Hmm.', signature: 'sig-1' },
            { type: 'reasoning', text: '', redacted: 'b64data' },
            { type: 'reasoning', text: 'unsigned' },
            { type: 'reasoning', text: '', encrypted: 'openai-blob' },
            { type: 'text', text: 'Hello.' },
          ],
        },
      ],
    });
    expect(body.messages[1].content).toEqual([
      { reasoningContent: { reasoningText: { text: 'Hmm.', signature: 'sig-1' } } },
      { reasoningContent: { redactedContent: 'b64data' } },
      { text: 'Hello.' },
    ]);
    // Another model never gets Claude's signed reasoning.
    const nova = encode({
      messages: [
        ...base().messages,
        {
          role: 'assistant',
          content: [
            { type: 'reasoning', text: 'Hmm.', signature: 'sig-1' },
            { type: 'text', text: 'Hi.' },
          ],
        },
      ],
    });
    expect(nova.messages[1].content).toEqual([{ text: 'Hi.' }]);
  });

  it('additionalModelRequestFields: Claude’s thinking budget and top_k, Nova’s topK and reasoning effort; top_k elsewhere is a 400', () => {
    const claude = encode({
      model: 'us.anthropic.claude-sonnet-4-5-20250929-v1:0',
      reasoning: { budgetTokens: 2000 },
      maxOutputTokens: 1000,
      temperature: 0.5,
    });
    expect(claude.additionalModelRequestFields).toEqual({ thinking: { type: 'enabled', budget_tokens: 2000 } });
    // The budget stays below max_tokens, and temperature goes (Claude refuses it with thinking).
    expect(claude.inferenceConfig).toEqual({ maxTokens: 3000 });
    expect(encode({ model: 'anthropic.claude-3-5-haiku-20241022-v1:0', topK: 40 }).additionalModelRequestFields).toEqual({ top_k: 40 });
    // A tool turn replayed without its signed reasoning (a Chat client) goes without thinking: Claude would refuse it.
    const unsignedToolTurn = encode({
      model: 'us.anthropic.claude-sonnet-4-5-20250929-v1:0',
      reasoning: { effort: 'high' },
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Weather?' }] },
        { role: 'assistant', content: [{ type: 'tool_call', id: 't1', name: 'f', arguments: '{}' }] },
        { role: 'tool', toolCallId: 't1', content: [{ type: 'text', text: 'sunny' }] },
      ],
    });
    expect(unsignedToolTurn.additionalModelRequestFields).toBeUndefined();
    expect(encode({ topK: 40, reasoning: { effort: 'minimal' } }).additionalModelRequestFields).toEqual({
      inferenceConfig: { topK: 40 },
      reasoningConfig: { type: 'enabled', maxReasoningEffort: 'low' },
    });
    // A family without top_k: the hint is dropped (and noted).
    expect(encode({ model: 'meta.llama3-3-70b-instruct-v1:0', topK: 40 }).additionalModelRequestFields).toBeUndefined();
    expect(thrown(() => encode({ responseFormat: { type: 'json_object' } })).param).toBe('response_format');
    expect(
      encode({ responseFormat: { type: 'json_schema', name: 'answer', schema: { type: 'object', properties: { n: { type: 'integer' } } } } }).outputConfig,
    ).toEqual({
      textFormat: { type: 'json_schema', structure: { jsonSchema: { name: 'answer', schema: '{"type":"object","properties":{"n":{"type":"integer"}}}' } } },
    });
    expect(thrown(() => encode({ passthrough: { n: 2 } })).param).toBe('n');
  });

  it('the model and its family of ids, inference profiles and ARNs', () => {
    expect(bareModelId('us-gov.anthropic.claude-3-haiku-20240307-v1:0')).toBe('anthropic.claude-3-haiku-20240307-v1:0');
    expect(bareModelId('arn:aws:bedrock:us-east-1::foundation-model/amazon.nova-pro-v1:0')).toBe('amazon.nova-pro-v1:0');
    expect(bedrockFamily('anthropic.claude-3-haiku-20240307-v1:0')).toBe('anthropic');
    expect(bedrockFamily('global.anthropic.claude-sonnet-4-5-20250929-v1:0')).toBe('anthropic');
    expect(bedrockFamily('apac.amazon.nova-lite-v1:0')).toBe('amazon');
    expect(bedrockFamily('arn:aws:bedrock:us-east-1:123456789012:inference-profile/eu.anthropic.claude-3-7-sonnet-20250219-v1:0')).toBe('anthropic');
    expect(bedrockFamily('arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/abc123')).toBeUndefined();
  });
});

describe('Converse stream decoder', () => {
  const run = (events: [string, Json][], end = true): IRStreamEvent[] => {
    const decoder = converseUpstream.streamDecoder();
    const out: IRStreamEvent[] = [];
    for (const [event, payload] of events) decoder.push({ event, data: JSON.stringify({ ...payload, p: 'abc' }) }, out);
    if (end) decoder.end(out);
    return out;
  };

  it('reasoning with its signature, text, a streamed call and one without input, the stop reason and the usage with cache counters', () => {
    const events = run([
      ['messageStart', { role: 'assistant' }],
      ['contentBlockDelta', { contentBlockIndex: 0, delta: { reasoningContent: { text: 'Think' } } }],
      ['contentBlockDelta', { contentBlockIndex: 0, delta: { reasoningContent: { signature: 'sig-' } } }],
      ['contentBlockDelta', { contentBlockIndex: 0, delta: { reasoningContent: { signature: 'xyz' } } }],
      ['contentBlockStop', { contentBlockIndex: 0 }],
      ['contentBlockDelta', { contentBlockIndex: 1, delta: { text: 'Hel' } }],
      ['contentBlockDelta', { contentBlockIndex: 1, delta: { text: 'lo' } }],
      ['contentBlockStop', { contentBlockIndex: 1 }],
      ['contentBlockStart', { contentBlockIndex: 2, start: { toolUse: { toolUseId: 'tooluse_1', name: 'get_weather' } } }],
      ['contentBlockDelta', { contentBlockIndex: 2, delta: { toolUse: { input: '{"city":' } } }],
      ['contentBlockDelta', { contentBlockIndex: 2, delta: { toolUse: { input: '"Paris"}' } } }],
      ['contentBlockStop', { contentBlockIndex: 2 }],
      ['contentBlockStart', { contentBlockIndex: 3, start: { toolUse: { toolUseId: 'tooluse_2', name: 'now' } } }],
      ['contentBlockStop', { contentBlockIndex: 3 }],
      ['messageStop', { stopReason: 'tool_use' }],
      [
        'metadata',
        { usage: { inputTokens: 100, outputTokens: 20, totalTokens: 1320, cacheReadInputTokens: 1000, cacheWriteInputTokens: 200 }, metrics: { latencyMs: 9 } },
      ],
    ]);
    expect(events.slice(1)).toEqual([
      { type: 'reasoning_delta', text: 'Think' },
      { type: 'reasoning_end', signature: 'sig-xyz' },
      { type: 'text_delta', text: 'Hel' },
      { type: 'text_delta', text: 'lo' },
      { type: 'tool_call_start', id: 'tooluse_1', name: 'get_weather' },
      { type: 'tool_call_delta', arguments: '{"city":' },
      { type: 'tool_call_delta', arguments: '"Paris"}' },
      { type: 'tool_call_start', id: 'tooluse_2', name: 'now' },
      { type: 'tool_call_delta', arguments: '{}' },
      {
        type: 'finish',
        reason: 'tool_calls',
        usage: expect.objectContaining({ input: 1300, cachedRead: 1000, cacheWrite: 200, output: 20 }),
      },
    ]);
    expect(events[0]).toMatchObject({ type: 'start', id: expect.stringMatching(/^msg_bdrk_/) });
  });

  it('stop reasons: guardrails and filters are content filters, max tokens a length', () => {
    const finish = (stopReason: string) =>
      run([
        ['messageStart', {}],
        ['contentBlockDelta', { delta: { text: 'x' } }],
        ['messageStop', { stopReason }],
      ]).at(-1);
    expect(finish('guardrail_intervened')).toEqual({ type: 'finish', reason: 'content_filter' });
    expect(finish('content_filtered')).toEqual({ type: 'finish', reason: 'content_filter' });
    expect(finish('max_tokens')).toEqual({ type: 'finish', reason: 'length' });
    expect(finish('stop_sequence')).toEqual({ type: 'finish', reason: 'stop_sequence' });
    expect(finish('end_turn')).toEqual({ type: 'finish', reason: 'stop' });
  });

  it('an exception event throws its status: a throttle is a 429 with a retry delay, a validation a 400 naming the field', () => {
    const throttle = thrown(() =>
      run([
        ['messageStart', {}],
        ['throttlingException', { message: 'Too many tokens, please wait before trying again.' }],
      ]),
    );
    expect(throttle.status).toBe(429);
    expect(throttle.headers['retry-after']).toBe('1');
    expect(throttle.code).toBe('throttlingException');
    const validation = thrown(() => run([['validationException', { message: "Value '5' at 'inferenceConfig.stopSequences' failed to satisfy constraint" }]]));
    expect(validation.status).toBe(400);
    expect(validation.param).toBe('stop');
    expect(thrown(() => run([['modelStreamErrorException', { message: 'boom' }]])).status).toBe(502);
  });

  it('bytes that end before messageStop are a cut stream; after it, the answer ends without usage', () => {
    const cut = thrown(() =>
      run([
        ['messageStart', {}],
        ['contentBlockDelta', { delta: { text: 'x' } }],
      ]),
    );
    expect(cut.code).toBe('upstream_stream_cut');
    expect(
      run([
        ['messageStart', {}],
        ['contentBlockDelta', { delta: { text: 'x' } }],
        ['messageStop', { stopReason: 'end_turn' }],
      ]).at(-1),
    ).toEqual({
      type: 'finish',
      reason: 'stop',
    });
  });
});

describe('Converse response decoder', () => {
  it('blocks in order, reasoning with its signature, tool calls, usage in IR terms', () => {
    const response = converseUpstream.decodeResponse({
      output: {
        message: {
          role: 'assistant',
          content: [
            { reasoningContent: { reasoningText: { text: 'Hmm', signature: 'sig' } } },
            { reasoningContent: { redactedContent: 'cmVk' } },
            { text: 'Calling.' },
            { toolUse: { toolUseId: 'tooluse_9', name: 'f', input: { a: 1 } } },
          ],
        },
      },
      stopReason: 'end_turn',
      usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15 },
    });
    expect(response.content).toEqual([
      { type: 'reasoning', text: 'Hmm', signature: 'sig' },
      { type: 'reasoning', text: '', redacted: 'cmVk' },
      { type: 'text', text: 'Calling.' },
      { type: 'tool_call', id: 'tooluse_9', name: 'f', arguments: '{"a":1}' },
    ]);
    // A turn that ends in calls is a tool-call finish, whatever the stop reason said.
    expect(response.finishReason).toBe('tool_calls');
    expect(response.usage).toMatchObject({ input: 10, output: 5 });
    expect(thrown(() => converseUpstream.decodeResponse({ nope: true })).status).toBe(502);
  });

  it('validation messages name the client’s field where there is one, else Bedrock’s path', () => {
    expect(validationParam("1 validation error detected: Value '0' at 'inferenceConfig.maxTokens' failed")).toBe('max_tokens');
    expect(validationParam('The text field in the ContentBlock object at messages.0.content.0 is blank.')).toBe('messages');
    expect(validationParam('The toolSpec at toolConfig.tools.1 is invalid.')).toBe('tools');
    expect(validationParam('Malformed input request: #: extraneous key [foo] is not permitted')).toBe('foo');
    expect(validationParam('invalid beta flag')).toBeNull();
  });
});

describe('event-stream reader', () => {
  const codec = new EventStreamCodec(toUtf8, fromUtf8);
  const message = (headers: Record<string, string>, body: Json): Uint8Array =>
    codec.encode({
      headers: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, { type: 'string' as const, value }])),
      body: fromUtf8(JSON.stringify(body)),
    });

  it('messages split anywhere across reads come out whole, in order', () => {
    const bytes = Buffer.concat([
      message({ ':message-type': 'event', ':event-type': 'messageStart' }, { role: 'assistant' }),
      message({ ':message-type': 'event', ':event-type': 'contentBlockDelta' }, { contentBlockIndex: 0, delta: { text: 'é😀' } }),
    ]);
    for (const step of [1, 3, 7, 50, bytes.length]) {
      const reader = new EventStreamReader();
      const seen: SseMessage[] = [];
      for (let at = 0; at < bytes.length; at += step) reader.feed(bytes.subarray(at, at + step), (event) => seen.push(event));
      reader.end();
      expect(seen).toEqual([
        { event: 'messageStart', data: '{"role":"assistant"}' },
        { event: 'contentBlockDelta', data: '{"contentBlockIndex":0,"delta":{"text":"é😀"}}' },
      ]);
    }
  });

  it('a large message in many small reads is copied about once, not once per read', () => {
    const big = message({ ':message-type': 'event', ':event-type': 'contentBlockDelta' }, { contentBlockIndex: 0, delta: { text: 'x'.repeat(1 << 20) } });
    const small = message({ ':message-type': 'event', ':event-type': 'messageStop' }, { stopReason: 'end_turn' });
    const bytes = Buffer.concat([big, small]);
    // Every byte copy the reader can make: joining buffers, filling a typed array.
    let copied = 0;
    const typedArray = Object.getPrototypeOf(Uint8Array.prototype) as Uint8Array;
    const fill = typedArray.set;
    const join = Buffer.concat;
    const spies = [
      vi.spyOn(Buffer, 'concat').mockImplementation((list, total) => {
        const joined = join(list, total);
        copied += joined.length;
        return joined;
      }),
      vi.spyOn(typedArray, 'set').mockImplementation(function (this: Uint8Array, source: ArrayLike<number>, offset?: number) {
        copied += source.length;
        fill.call(this, source, offset);
      }),
    ];
    const seen: SseMessage[] = [];
    try {
      const reader = new EventStreamReader();
      for (let at = 0; at < bytes.length; at += 1024) reader.feed(bytes.subarray(at, at + 1024), (event) => seen.push(event));
      reader.end();
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
    expect(seen.map((event) => event.event)).toEqual(['contentBlockDelta', 'messageStop']);
    expect(copied).toBeLessThanOrEqual(2 * bytes.length);
  });

  it('a corrupt message (CRC) is a 502; half a message at the end is a cut; an exception message throws its error', () => {
    const good = message({ ':message-type': 'event', ':event-type': 'messageStart' }, {});
    const corrupt = Buffer.from(good);
    corrupt[corrupt.length - 6] = corrupt[corrupt.length - 6]! ^ 0xff;
    expect(thrown(() => new EventStreamReader().feed(corrupt, () => {})).code).toBe('upstream_invalid_response');

    const reader = new EventStreamReader();
    reader.feed(good.subarray(0, 10), () => {});
    expect(thrown(() => reader.end()).code).toBe('upstream_stream_cut');

    const exception = message({ ':message-type': 'exception', ':exception-type': 'throttlingException' }, { message: 'Slow down' });
    expect(thrown(() => new EventStreamReader().feed(exception, () => {}))).toMatchObject({ status: 429, message: 'Slow down' });
  });
});
