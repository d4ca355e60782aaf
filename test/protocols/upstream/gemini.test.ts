import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../../src/errors.js';
import { decodeGeminiResponse } from '../../../src/protocols/gemini/decode-response.js';
import { geminiStreamDecoder } from '../../../src/protocols/gemini/decode-stream.js';
import { encodeGeminiRequest } from '../../../src/protocols/gemini/encode-request.js';
import { toGeminiSchema } from '../../../src/protocols/gemini/schema-subset.js';
import { fromGeminiUsage } from '../../../src/protocols/gemini/usage.js';
import type { IRRequest } from '../../../src/protocols/ir.js';
import { SCHEMA_WORK, WorkBudget } from '../../../src/work-budget.js';
import { definitionChain, selfReference } from '../../helpers/hostile-schemas.js';
import { decodeText, withoutRaw } from './helpers.js';

const base = (over: Partial<IRRequest> = {}): IRRequest => ({
  model: 'gemini-2.5-flash',
  system: [{ type: 'text', text: 'Be brief.' }],
  messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
  stream: false,
  passthrough: {},
  ...over,
});

describe('encodeGeminiRequest', () => {
  it('maps system, user parts and sampling into a GenerateContentRequest', () => {
    const body = encodeGeminiRequest(
      base({
        messages: [
          { role: 'system', content: [{ type: 'text', text: 'Later rule.' }] },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What is this?' },
              { type: 'image', data: 'iVBORw0KGgo=', mediaType: 'image/png' },
              { type: 'image', url: 'https://example.com/cat.jpg' },
              { type: 'file', data: 'JVBERi0=', mediaType: 'application/pdf', filename: 'a.pdf' },
            ],
          },
        ],
        maxOutputTokens: 100,
        temperature: 0.3,
        topP: 0.9,
        topK: 20,
        stop: ['END'],
        passthrough: { seed: 7, store: true },
      }),
    );
    expect(body).toEqual({
      systemInstruction: { parts: [{ text: 'Be brief.' }, { text: 'Later rule.' }] },
      contents: [
        {
          role: 'user',
          parts: [
            { text: 'What is this?' },
            { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } },
            { fileData: { mimeType: 'image/jpeg', fileUri: 'https://example.com/cat.jpg' } },
            { inlineData: { mimeType: 'application/pdf', data: 'JVBERi0=' } },
          ],
        },
      ],
      generationConfig: { stopSequences: ['END'], maxOutputTokens: 100, temperature: 0.3, topP: 0.9, topK: 20, seed: 7 },
    });
  });

  it('puts each Gemini signature back on the part after its reasoning part, drops reasoning text and other vendors’ opaque values', () => {
    const body = encodeGeminiRequest(
      base({
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'Weather?' }] },
          {
            role: 'assistant',
            content: [
              { type: 'reasoning', text: 'thinking…', thoughtSignature: 'SIG1' },
              { type: 'tool_call', id: 'call_gm0001', name: 'get_weather', arguments: '{"city":"Paris"}' },
              { type: 'tool_call', id: 'gemini-id-2', name: 'get_time', arguments: '' },
              { type: 'reasoning', text: 'Claude thought', signature: 'anthropic-sig' },
              { type: 'reasoning', text: '', encrypted: 'openai-enc' },
            ],
          },
          { role: 'tool', toolCallId: 'call_gm0001', content: [{ type: 'text', text: '{"temp":18}' }] },
          { role: 'tool', toolCallId: 'gemini-id-2', content: [{ type: 'text', text: 'failed' }], isError: true },
          {
            role: 'assistant',
            content: [
              { type: 'text', text: 'It is 18.' },
              { type: 'reasoning', text: '', thoughtSignature: 'SIG2' },
            ],
          },
        ],
      }),
    );
    expect(body.contents).toEqual([
      { role: 'user', parts: [{ text: 'Weather?' }] },
      {
        role: 'model',
        parts: [
          // The synthesized id is not Gemini's: left out; Gemini's own id goes back.
          { functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'SIG1' },
          { functionCall: { id: 'gemini-id-2', name: 'get_time', args: {} } },
        ],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'get_weather', response: { output: { temp: 18 } } } },
          { functionResponse: { id: 'gemini-id-2', name: 'get_time', response: { error: 'failed' } } },
        ],
      },
      // A signature that closes the turn rides an empty text part.
      { role: 'model', parts: [{ text: 'It is 18.' }, { text: '', thoughtSignature: 'SIG2' }] },
    ]);
  });

  it('declares tools in Gemini’s schema subset, with the tool choice as toolConfig', () => {
    const body = encodeGeminiRequest(
      base({
        tools: [
          {
            name: 'lookup',
            description: 'Find',
            parameters: {
              $schema: 'http://json-schema.org/draft-07/schema#',
              type: 'object',
              additionalProperties: false,
              properties: {
                q: { type: ['string', 'null'], minLength: 1 },
                kind: { anyOf: [{ $ref: '#/$defs/Kind' }, { type: 'null' }] },
                tags: { type: 'array', items: { type: 'string', format: 'uri' } },
              },
              required: ['q', 'missing'],
              $defs: { Kind: { type: 'string', enum: ['a', 'b'] } },
            },
          },
          { name: 'ping', parameters: { type: 'object', properties: {} } },
        ],
        toolChoice: { type: 'tool', name: 'lookup' },
      }),
    );
    expect(body.tools).toEqual([
      {
        functionDeclarations: [
          {
            name: 'lookup',
            description: 'Find',
            parameters: {
              type: 'OBJECT',
              properties: {
                q: { type: 'STRING', nullable: true, minLength: '1' },
                kind: { type: 'STRING', enum: ['a', 'b'], nullable: true },
                tags: { type: 'ARRAY', items: { type: 'STRING' } },
              },
              required: ['q'],
            },
          },
          // No inputs: Gemini refuses an OBJECT without properties.
          { name: 'ping' },
        ],
      },
    ]);
    expect(body.toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['lookup'] } });
    expect(encodeGeminiRequest(base({ tools: [{ name: 'ping' }], toolChoice: { type: 'required' } })).toolConfig).toEqual({
      functionCallingConfig: { mode: 'ANY' },
    });
  });

  it('maps reasoning to thinkingConfig by model generation, and structured output to responseSchema', () => {
    const config = (model: string, reasoning: IRRequest['reasoning']) => encodeGeminiRequest(base({ model, reasoning })).generationConfig?.thinkingConfig;
    expect(config('gemini-2.5-flash', { effort: 'low' })).toEqual({ thinkingBudget: 1024, includeThoughts: true });
    expect(config('gemini-2.5-flash', { effort: 'none' })).toEqual({ thinkingBudget: 0 });
    expect(config('gemini-2.5-pro', { budgetTokens: 5000 })).toEqual({ thinkingBudget: 5000, includeThoughts: true });
    expect(config('gemini-3-pro-preview', { effort: 'medium' })).toEqual({ thinkingLevel: 'HIGH', includeThoughts: true });
    expect(config('gemini-3-flash-preview', { effort: 'minimal' })).toEqual({ thinkingLevel: 'MINIMAL', includeThoughts: true });

    const structured = encodeGeminiRequest(
      base({ responseFormat: { type: 'json_schema', name: 'x', schema: { type: 'object', properties: { a: { type: 'integer' } } } } }),
    );
    expect(structured.generationConfig).toEqual({
      responseMimeType: 'application/json',
      responseSchema: { type: 'OBJECT', properties: { a: { type: 'INTEGER' } } },
    });
  });

  it('refuses n > 1, more than 5 stop sequences, and a tool result that answers no call', () => {
    expect(() => encodeGeminiRequest(base({ passthrough: { n: 2 } }))).toThrow(/n > 1/);
    expect(() => encodeGeminiRequest(base({ stop: ['1', '2', '3', '4', '5', '6'] }))).toThrow(/5 stop/);
    expect(() => encodeGeminiRequest(base({ messages: [{ role: 'tool', toolCallId: 'call_x', content: [] }] }))).toThrow(/answers no tool call/);
  });
});

describe('toGeminiSchema', () => {
  const convert = (schema: unknown, budget = new WorkBudget()) => toGeminiSchema(schema, budget, 'tools[0].function.parameters');

  it('merges allOf, turns const into enum and cuts $ref cycles', () => {
    expect(
      convert({
        allOf: [
          { type: 'object', properties: { a: { const: 1 } } },
          { properties: { b: { type: 'boolean' } }, required: ['b'] },
        ],
      }),
    ).toEqual({
      type: 'OBJECT',
      properties: { a: { type: 'STRING', enum: ['1'] }, b: { type: 'BOOLEAN' } },
      required: ['b'],
    });
    const cyclic = convert({ type: 'object', properties: { next: { $ref: '#' } }, $defs: {} });
    expect(cyclic.type).toBe('OBJECT');
  });

  it('inlines a definition that refers to itself once, with {} where it recurs (the 369-byte bomb of the review)', () => {
    const budget = new WorkBudget();
    const inner = { type: 'OBJECT', properties: { p0: {}, p1: {}, p2: {} } };
    expect(convert(selfReference(3), budget)).toEqual({ type: 'OBJECT', properties: { p0: inner, p1: inner, p2: inner } });
    expect(budget.nodes).toBeLessThan(100);
  });

  it('refuses a chain of definitions that multiplies past the budget, naming the field', () => {
    const budget = new WorkBudget();
    expect(() => convert(definitionChain(12, 3), budget)).toThrow(
      expect.objectContaining({ status: 400, code: 'schema_too_complex', param: 'tools[0].function.parameters' }),
    );
    expect(budget.nodes).toBeLessThanOrEqual(SCHEMA_WORK.nodes + 100);
  });

  it('counts the text a shared definition repeats, and one budget serves every schema of a request', () => {
    const long = { type: 'string', description: 'x'.repeat(100_000) };
    // 30 uses of a 100 KB description: 3 MB of text once expanded, under the 4 MiB a request may expand.
    const wide = { type: 'object', properties: Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`p${i}`, { $ref: '#/$defs/long' }])), $defs: { long } };
    const budget = new WorkBudget();
    convert(wide, budget);
    expect(budget.chars).toBeGreaterThan(3_000_000);
    expect(() => convert(wide, budget)).toThrow(/too large once its \$refs are expanded/);
  });
});

describe('decodeGeminiResponse', () => {
  it('reads thoughts, text and calls, a signature before its part, usage with cached and thinking tokens', () => {
    const response = decodeGeminiResponse({
      responseId: 'resp-1',
      modelVersion: 'gemini-2.5-flash',
      candidates: [
        {
          index: 0,
          finishReason: 'STOP',
          content: {
            role: 'model',
            parts: [
              { text: 'Let me think.', thought: true },
              { text: 'Checking.' },
              { functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'SIG' },
              { functionCall: { id: 'c2', name: 'get_time', args: {} } },
            ],
          },
        },
      ],
      usageMetadata: { promptTokenCount: 100, cachedContentTokenCount: 60, candidatesTokenCount: 20, thoughtsTokenCount: 30, totalTokenCount: 150 },
    });
    const [reasoning, text, signature, first, second] = response.content;
    expect([reasoning, text, signature]).toEqual([
      { type: 'reasoning', text: 'Let me think.' },
      { type: 'text', text: 'Checking.' },
      { type: 'reasoning', text: '', thoughtSignature: 'SIG' },
    ]);
    expect(first).toMatchObject({ type: 'tool_call', name: 'get_weather', arguments: '{"city":"Paris"}' });
    expect((first as { id: string }).id).toMatch(/^call_gm/);
    expect(second).toEqual({ type: 'tool_call', id: 'c2', name: 'get_time', arguments: '{}' });
    expect(response.finishReason).toBe('tool_calls');
    expect(response.id).toBe('resp-1');
    expect(withoutRaw(response).usage).toEqual({ input: 100, cachedRead: 60, output: 50, reasoning: 30 });
  });

  it('reports safety stops and blocked prompts as content_filter, MAX_TOKENS as length', () => {
    const answer = (finishReason: string) => decodeGeminiResponse({ candidates: [{ finishReason, content: { role: 'model', parts: [{ text: 'x' }] } }] });
    for (const reason of ['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII']) expect(answer(reason).finishReason).toBe('content_filter');
    expect(answer('MAX_TOKENS').finishReason).toBe('length');
    const blocked = decodeGeminiResponse({ promptFeedback: { blockReason: 'SAFETY' }, usageMetadata: { promptTokenCount: 9 } });
    expect(blocked).toMatchObject({ content: [], finishReason: 'content_filter' });
  });
});

describe('fromGeminiUsage', () => {
  it('counts thinking inside output and tool-use prompt inside input', () => {
    expect(withoutRaw({ usage: fromGeminiUsage({ promptTokenCount: 10, toolUsePromptTokenCount: 5, candidatesTokenCount: 3 }) }).usage).toEqual({
      input: 15,
      output: 3,
    });
  });
});

const chunk = (parts: unknown[], extra: Record<string, unknown> = {}) =>
  `data: ${JSON.stringify({ candidates: [{ index: 0, content: { role: 'model', parts }, ...extra }], usageMetadata: { promptTokenCount: 8 }, modelVersion: 'gemini-2.5-flash', responseId: 'r1' })}\r\n\r\n`;

describe('geminiStreamDecoder', () => {
  it('decodes thoughts, text, a signed call and the final usage', async () => {
    const text = [
      chunk([{ text: 'Hmm', thought: true }]),
      chunk([{ text: 'Hel' }]),
      chunk([{ text: 'lo' }]),
      chunk([{ functionCall: { name: 'f', args: { a: 1 } }, thoughtSignature: 'S1' }]),
      `data: ${JSON.stringify({
        candidates: [{ index: 0, content: { role: 'model', parts: [{ text: '' }] }, finishReason: 'STOP' }],
        usageMetadata: { promptTokenCount: 8, cachedContentTokenCount: 4, candidatesTokenCount: 6, thoughtsTokenCount: 2 },
      })}\r\n\r\n`,
    ].join('');
    const { events, error } = await decodeText(geminiStreamDecoder, text, 13);
    expect(error).toBeUndefined();
    const call = events.find((event) => event.type === 'tool_call_start');
    expect(events.slice(1)).toEqual([
      { type: 'reasoning_delta', text: 'Hmm' },
      { type: 'text_delta', text: 'Hel' },
      { type: 'text_delta', text: 'lo' },
      { type: 'reasoning_end', thoughtSignature: 'S1' },
      call,
      { type: 'tool_call_delta', arguments: '{"a":1}' },
      { type: 'finish', reason: 'tool_calls', usage: { input: 8, cachedRead: 4, output: 8, reasoning: 2 } },
    ]);
    expect(events[0]).toMatchObject({ type: 'start', id: 'r1', model: 'gemini-2.5-flash' });
  });

  it('keeps a streamed answer in one piece when its last text chunk carries the signature (it follows the text)', async () => {
    const text = [
      chunk([{ text: 'The token is ' }]),
      chunk([{ text: 'tok_1' }]),
      chunk([{ text: '.', thoughtSignature: 'S1' }], { finishReason: 'STOP' }),
    ].join('');
    const { events } = await decodeText(geminiStreamDecoder, text, 13);
    expect(events.slice(1)).toEqual([
      { type: 'text_delta', text: 'The token is ' },
      { type: 'text_delta', text: 'tok_1' },
      { type: 'text_delta', text: '.' },
      { type: 'reasoning_end', thoughtSignature: 'S1' },
      { type: 'finish', reason: 'stop', usage: { input: 8 } },
    ]);
    // The first text chunk signed, or a call after the text: the signature goes before its part, as ever.
    const signedFirst = await decodeText(geminiStreamDecoder, chunk([{ text: 'Hi', thoughtSignature: 'S2' }], { finishReason: 'STOP' }), 13);
    expect(signedFirst.events.slice(1, 3)).toEqual([
      { type: 'reasoning_end', thoughtSignature: 'S2' },
      { type: 'text_delta', text: 'Hi' },
    ]);
  });

  it('throws on a stream cut before the finish reason, and on an error event with its status', async () => {
    const cut = await decodeText(geminiStreamDecoder, chunk([{ text: 'Hel' }]));
    expect(cut.error).toBeInstanceOf(GatewayError);
    expect((cut.error as GatewayError).status).toBe(502);
    const failed = await decodeText(
      geminiStreamDecoder,
      `${chunk([{ text: 'a' }])}data: {"error":{"code":503,"message":"overloaded","status":"UNAVAILABLE"}}\n\n`,
    );
    expect(failed.error).toMatchObject({ status: 503, message: 'overloaded', code: 'UNAVAILABLE' });
  });

  it('waits for usage after a finish reason that came without it', async () => {
    const text = `${chunk([{ text: 'x' }], { finishReason: 'MAX_TOKENS' }).replace(',"usageMetadata":{"promptTokenCount":8}', '')}`;
    const { events, error } = await decodeText(geminiStreamDecoder, text);
    expect(error).toBeUndefined();
    expect(events.at(-1)).toEqual({ type: 'finish', reason: 'length' });
  });
});
