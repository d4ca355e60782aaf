import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors.js';
import { geminiClient } from '../../src/protocols/gemini/index.js';
import { geminiErrorBody } from '../../src/protocols/gemini/style.js';
import type { IRResponse, IRStreamEvent } from '../../src/protocols/ir.js';
import { validateBody } from '../../src/schemas/validate.js';
import { makeCtx } from './helpers.js';

type Json = Record<string, any>;

/** A body as the route gives it to the decoder: validated (camelCased), model and stream from the path. */
function decode(body: Json, stream = false) {
  const validated = validateBody(geminiClient.schema, body) as Json;
  return geminiClient.decodeRequest({ ...validated, model: 'public', stream }, 'upstream-model');
}

function decodeError(body: Json): GatewayError {
  try {
    decode(body);
  } catch (error) {
    return error as GatewayError;
  }
  throw new Error('expected a 400');
}

const user = (text: string) => ({ role: 'user', parts: [{ text }] });

describe('gemini request → IR', () => {
  it('reads snake_case structural keys, never renaming the keys of arguments or schemas', () => {
    const ir = decode({
      system_instruction: { parts: [{ text: 'Be brief.' }] },
      contents: [
        user('Hi'),
        { role: 'model', parts: [{ function_call: { name: 'lookup', args: { user_id: 7 } } }] },
        { role: 'user', parts: [{ function_response: { name: 'lookup', response: { output: 'found' } } }] },
      ],
      tools: [{ function_declarations: [{ name: 'lookup', parameters_json_schema: { type: 'object', properties: { user_id: { type: 'integer' } } } }] }],
      generation_config: { max_output_tokens: 10, thinking_config: { thinking_budget: 512 } },
    });
    expect(ir.system).toEqual([{ type: 'text', text: 'Be brief.' }]);
    expect(ir.messages[1]).toEqual({
      role: 'assistant',
      content: [{ type: 'tool_call', id: expect.stringMatching(/^call_gm_/), name: 'lookup', arguments: '{"user_id":7}' }],
    });
    expect(ir.tools?.[0]?.parameters).toEqual({ type: 'object', properties: { user_id: { type: 'integer' } } });
    expect(ir.maxOutputTokens).toBe(10);
    expect(ir.reasoning).toEqual({ budgetTokens: 512 });
  });

  it('matches function responses to calls by id, else by name in order, and refuses one that answers nothing', () => {
    const ir = decode({
      contents: [
        user('Go'),
        {
          role: 'model',
          parts: [{ functionCall: { name: 'a', args: {} } }, { functionCall: { name: 'a', args: { n: 2 } } }, { functionCall: { id: 'c-1', name: 'b' } }],
        },
        {
          role: 'function',
          parts: [
            { functionResponse: { id: 'c-1', name: 'b', response: { result: 3 } } },
            { functionResponse: { name: 'a', response: { output: 'first' } } },
            { functionResponse: { name: 'a', response: { error: 'boom' } } },
          ],
        },
      ],
    });
    const calls = (ir.messages[1] as Json).content.map((part: Json) => part.id);
    expect(ir.messages.slice(2)).toEqual([
      { role: 'tool', toolCallId: 'c-1', name: 'b', content: [{ type: 'text', text: '{"result":3}' }] },
      { role: 'tool', toolCallId: calls[0], name: 'a', content: [{ type: 'text', text: 'first' }] },
      { role: 'tool', toolCallId: calls[1], name: 'a', content: [{ type: 'text', text: 'boom' }], isError: true },
    ]);
    expect(new Set(calls).size).toBe(3);

    const error = decodeError({ contents: [user('Go'), { role: 'user', parts: [{ functionResponse: { name: 'a', response: {} } }] }] });
    expect(error.param).toBe('contents[1].parts[0].functionResponse.name');
  });

  it('puts a signature on a reasoning part before the part it signs, and joins streamed thought parts', () => {
    const ir = decode({
      contents: [
        user('Go'),
        {
          role: 'model',
          parts: [
            { text: 'Thinking ', thought: true },
            { text: 'more.', thought: true },
            { text: '', thought: true, thoughtSignature: 'infergate-signature:claude-sig' },
            { text: 'Answer.', thoughtSignature: 'gemini-sig' },
            { text: '', thoughtSignature: 'gemini-sig-2' },
          ],
        },
      ],
    });
    expect(ir.messages[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'reasoning', text: 'Thinking more.', signature: 'claude-sig' },
        { type: 'reasoning', text: '', thoughtSignature: 'gemini-sig' },
        { type: 'text', text: 'Answer.' },
        { type: 'reasoning', text: '', thoughtSignature: 'gemini-sig-2' },
      ],
    });
  });

  it('maps images and files by MIME type', () => {
    const ir = decode({
      contents: [
        {
          role: 'user',
          parts: [
            { inlineData: { mimeType: 'image/png', data: 'AAAA' } },
            { inlineData: { mimeType: 'application/pdf', data: 'JVBE' } },
            { fileData: { mimeType: 'image/jpeg', fileUri: 'https://example.com/a.jpg' } },
          ],
        },
      ],
    });
    expect(ir.messages[0]!.content).toEqual([
      { type: 'image', data: 'AAAA', mediaType: 'image/png' },
      { type: 'file', data: 'JVBE', mediaType: 'application/pdf' },
      { type: 'image', url: 'https://example.com/a.jpg', mediaType: 'image/jpeg', param: 'contents[0].parts[2].fileData.fileUri' },
    ]);
  });

  it('maps toolConfig modes, keeping only the allowed functions under ANY', () => {
    const tools = [{ functionDeclarations: [{ name: 'a' }, { name: 'b' }, { name: 'c' }] }];
    const one = decode({ contents: [user('x')], tools, toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['b'] } } });
    expect(one.toolChoice).toEqual({ type: 'tool', name: 'b' });
    const two = decode({ contents: [user('x')], tools, toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['a', 'c'] } } });
    expect(two.toolChoice).toEqual({ type: 'required' });
    expect(two.tools?.map((tool) => tool.name)).toEqual(['a', 'c']);
    expect(decode({ contents: [user('x')], tools, toolConfig: { functionCallingConfig: { mode: 'NONE' } } }).toolChoice).toEqual({ type: 'none' });
    expect(decodeError({ contents: [user('x')], tools, toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['z'] } } }).param).toBe(
      'toolConfig.functionCallingConfig.allowedFunctionNames[0]',
    );
  });

  it('turns Gemini schemas into JSON Schema and JSON mode into a response format', () => {
    const ir = decode({
      contents: [user('x')],
      generationConfig: {
        responseMimeType: 'application/json',
        responseSchema: {
          type: 'OBJECT',
          properties: { tags: { type: 'ARRAY', items: { type: 'STRING' }, maxItems: '3' }, note: { type: 'STRING', nullable: true } },
          propertyOrdering: ['tags', 'note'],
        },
      },
    });
    expect(ir.responseFormat).toEqual({
      type: 'json_schema',
      name: 'response',
      schema: { type: 'object', properties: { tags: { type: 'array', items: { type: 'string' }, maxItems: 3 }, note: { type: ['string', 'null'] } } },
      schemaField: 'generationConfig.responseSchema',
    });
    expect(decode({ contents: [user('x')], generationConfig: { responseMimeType: 'application/json' } }).responseFormat).toEqual({ type: 'json_object' });
  });

  it("reads Google's upper-case type names in a responseJsonSchema as JSON Schema's (Gemini CLI's routing classifier sends them)", () => {
    const ir = decode({
      contents: [user('x')],
      generationConfig: {
        responseMimeType: 'application/json',
        responseJsonSchema: {
          type: 'OBJECT',
          properties: { complexity_reasoning: { type: 'STRING', description: 'Why.' }, complexity_score: { type: 'INTEGER' } },
          required: ['complexity_reasoning', 'complexity_score'],
        },
      },
    });
    expect(ir.responseFormat).toEqual({
      type: 'json_schema',
      name: 'response',
      schema: {
        type: 'object',
        properties: { complexity_reasoning: { type: 'string', description: 'Why.' }, complexity_score: { type: 'integer' } },
        required: ['complexity_reasoning', 'complexity_score'],
      },
      schemaField: 'generationConfig.responseJsonSchema',
    });
  });

  it('maps thinking levels and budgets, and OpenAI-named sampling fields', () => {
    expect(decode({ contents: [user('x')], generationConfig: { thinkingConfig: { thinkingLevel: 'LOW', includeThoughts: true } } }).reasoning).toEqual({
      effort: 'low',
      summary: 'auto',
    });
    expect(decode({ contents: [user('x')], generationConfig: { thinkingConfig: { thinkingBudget: -1 } } }).reasoning).toEqual({ effort: 'medium' });
    expect(decode({ contents: [user('x')], generationConfig: { thinkingConfig: { thinkingBudget: 0 } } }).reasoning).toBeUndefined();
    expect(decode({ contents: [user('x')], generationConfig: { seed: 4, presencePenalty: 0.5, frequencyPenalty: 0.2, topK: 40 } })).toMatchObject({
      topK: 40,
      passthrough: { seed: 4, presence_penalty: 0.5, frequency_penalty: 0.2 },
    });
  });

  it('drops Google-hosted tools (named for the response header), ignores safetySettings, refuses what it cannot serve', () => {
    const ir = decode({
      contents: [user('x')],
      tools: [{ googleSearch: {} }, { codeExecution: {} }],
      safetySettings: [{ category: 'HARM_CATEGORY_HATE_SPEECH', threshold: 'BLOCK_NONE' }],
    });
    expect(ir.droppedTools).toEqual(['googleSearch', 'codeExecution']);
    expect(ir.tools).toBeUndefined();
    expect(decodeError({ contents: [user('x')], cachedContent: 'cachedContents/abc' }).param).toBe('cachedContent');
    expect(decodeError({ contents: [user('x')], generationConfig: { responseModalities: ['IMAGE'] } }).param).toBe('generationConfig.responseModalities');
    expect(decodeError({ contents: [{ role: 'user', parts: [{ executableCode: { code: '1' } }] }] }).param).toBe('contents[0].parts[0].executableCode');
    expect(decodeError({ contents: [] }).param).toBe('contents');
  });
});

const answer = (content: IRResponse['content']): IRResponse => ({
  id: 'resp-1',
  model: 'upstream-model',
  content,
  finishReason: 'tool_calls',
  usage: { input: 100, cachedRead: 40, output: 30, reasoning: 10 },
  created: 0,
});

describe('IR → gemini answer', () => {
  it('puts Gemini’s signature on the part it signs, another vendor’s on a thought part with its text', () => {
    const body = geminiClient.encodeResponse(
      answer([
        { type: 'reasoning', text: 'Hidden thought.', signature: 'claude-sig' },
        { type: 'reasoning', text: '', thoughtSignature: 'gem-sig' },
        { type: 'tool_call', id: 'call_1', name: 'f', arguments: '{"a":1}' },
        { type: 'reasoning', text: 'Unsigned, hidden.' },
        { type: 'reasoning', text: '', thoughtSignature: 'gem-sig-2' },
      ]),
      makeCtx({}),
    );
    expect(body).toEqual({
      candidates: [
        {
          content: {
            role: 'model',
            parts: [
              { text: 'Hidden thought.', thought: true, thoughtSignature: 'infergate-signature:claude-sig' },
              { functionCall: { id: 'call_1', name: 'f', args: { a: 1 } }, thoughtSignature: 'gem-sig' },
              { text: '', thoughtSignature: 'gem-sig-2' },
            ],
          },
          finishReason: 'STOP',
          index: 0,
        },
      ],
      usageMetadata: { promptTokenCount: 100, cachedContentTokenCount: 40, candidatesTokenCount: 20, thoughtsTokenCount: 10, totalTokenCount: 130 },
      modelVersion: 'public-model',
      responseId: 'resp-1',
    });
  });

  it('shows thought text when the client asked for thoughts', () => {
    const body = geminiClient.encodeResponse(
      answer([
        { type: 'reasoning', text: 'Why.' },
        { type: 'text', text: 'Because.' },
      ]),
      makeCtx({ generationConfig: { thinkingConfig: { includeThoughts: true } } }),
    );
    expect((body.candidates as Json[])[0]!.content.parts).toEqual([{ text: 'Why.', thought: true }, { text: 'Because.' }]);
  });
});

describe('IR → gemini stream', () => {
  const frames = (events: IRStreamEvent[], request: Json = {}) => {
    const encoder = geminiClient.streamEncoder(makeCtx(request));
    const text = events.map((event) => encoder.push(event)).join('');
    return {
      encoder,
      chunks: text
        .split('\n\n')
        .filter(Boolean)
        .map((frame) => JSON.parse(frame.replace(/^data: /, ''))),
    };
  };

  it('sends text as it comes, a function call whole, and finishReason with usage on the last chunk only', () => {
    const { encoder, chunks } = frames([
      { type: 'start', id: 'r1', model: 'm', created: 0, usage: { input: 10 } },
      { type: 'text_delta', text: 'Hel' },
      { type: 'text_delta', text: 'lo' },
      { type: 'reasoning_end', thoughtSignature: 'gem-sig' },
      { type: 'tool_call_start', id: 'call_1', name: 'f' },
      { type: 'tool_call_delta', arguments: '{"a":' },
      { type: 'tool_call_delta', arguments: '1}' },
      { type: 'finish', reason: 'tool_calls', usage: { output: 5 } },
    ]);
    expect(chunks.map((chunk) => chunk.candidates[0].content.parts)).toEqual([
      [{ text: 'Hel' }],
      [{ text: 'lo' }],
      [{ functionCall: { id: 'call_1', name: 'f', args: { a: 1 } }, thoughtSignature: 'gem-sig' }],
    ]);
    expect(chunks.map((chunk) => chunk.candidates[0].finishReason)).toEqual([undefined, undefined, 'STOP']);
    expect(chunks.map((chunk) => chunk.usageMetadata)).toEqual([undefined, undefined, { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 }]);
    expect(chunks.every((chunk) => chunk.responseId === 'r1' && chunk.modelVersion === 'public-model')).toBe(true);
    expect(encoder.finished).toBe(true);
  });

  it('holds hidden thought text until a foreign signature must carry it, and drops it otherwise', () => {
    const { chunks } = frames([
      { type: 'reasoning_delta', text: 'Plan ' },
      { type: 'reasoning_delta', text: 'A.' },
      { type: 'reasoning_end', signature: 'claude-sig' },
      { type: 'reasoning_delta', text: 'Unsigned.' },
      { type: 'text_delta', text: 'Done.' },
      { type: 'finish', reason: 'stop' },
    ]);
    expect(chunks.map((chunk) => chunk.candidates[0].content.parts)).toEqual([
      [{ text: 'Plan A.', thought: true, thoughtSignature: 'infergate-signature:claude-sig' }],
      [{ text: 'Done.' }],
      [{ text: '' }],
    ]);
  });

  it('ends a failed stream with Google’s error chunk', () => {
    const encoder = geminiClient.streamEncoder(makeCtx({}));
    const frame = encoder.fail(new GatewayError({ status: 502, message: 'Upstream cut.' }));
    expect(JSON.parse(frame.replace(/^data: /, ''))).toEqual({ error: { code: 502, message: 'Upstream cut.', status: 'UNAVAILABLE' } });
  });
});

describe('Google error body', () => {
  it('names the status, the field and the retry delay', () => {
    expect(geminiErrorBody(new GatewayError({ status: 429, message: 'Slow down.', code: 'rate_limit_exceeded', headers: { 'retry-after': '7' } }))).toEqual({
      error: {
        code: 429,
        message: 'Slow down.',
        status: 'RESOURCE_EXHAUSTED',
        details: [
          { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'RATE_LIMIT_EXCEEDED', domain: 'infergate' },
          { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '7s' },
        ],
      },
    });
    expect(geminiErrorBody(new GatewayError({ status: 504, message: 'Late.' })).error.status).toBe('DEADLINE_EXCEEDED');
    expect(geminiErrorBody(new GatewayError({ status: 403, message: 'No.' })).error.status).toBe('PERMISSION_DENIED');
  });
});
