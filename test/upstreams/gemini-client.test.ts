import { ApiError, type Content, type FunctionDeclaration, GoogleGenAI, type GenerateContentResponse, Type } from '@google/genai';
import { type FakeGemini, useGoogleHarness } from './google-harness.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { createGateway } from '../../src/gateway.js';
import { createLocalProvider } from '../../src/providers/local/local-provider.js';
import { serve } from '../helpers/serve.js';
import {
  THROUGH_SECOND_DELTA,
  TIME_SCHEMA,
  UPSTREAMS,
  USAGE,
  WEATHER_SCHEMA,
  expectUpstreamCredentials,
  parallelCalls,
  promptOf,
  rateLimited,
  toolExchange,
  type Harness,
  type UpstreamKind,
  weatherAndTimeExchange,
} from './harness.js';

type Json = Record<string, any>;

/** `@google/genai` (the official Gemini SDK) against the gateway's Gemini endpoint, over each upstream. */
let h: Harness;
let genai: GoogleGenAI;
let gemini: FakeGemini;
useGoogleHarness((started) => ({ h, gemini } = started));
beforeAll(() => {
  genai = client('sk-test');
});

function client(apiKey: string): GoogleGenAI {
  return new GoogleGenAI({ apiKey, httpOptions: { baseUrl: h.url } });
}

const declarations: FunctionDeclaration[] = [
  { name: 'get_weather', description: 'Weather of a city', parametersJsonSchema: WEATHER_SCHEMA },
  // Gemini's own schema dialect: upper-case types.
  { name: 'get_time', parameters: { type: Type.OBJECT, properties: { tz: { type: Type.STRING } }, required: ['tz'] } },
];
const question: Content[] = [{ role: 'user', parts: [{ text: 'Weather and time in Paris?' }] }];

/** Usage as a Gemini client reads it: the prompt with its cached part, the answer without the thinking. */
function expectedUsageMetadata(kind: UpstreamKind): Json {
  // Anthropic reports no thinking counter (thinking is inside its output tokens).
  const thoughts = kind === 'anthropic' ? undefined : USAGE.reasoning;
  return {
    promptTokenCount: USAGE.input,
    cachedContentTokenCount: USAGE.cachedRead,
    candidatesTokenCount: USAGE.output - (thoughts ?? 0),
    totalTokenCount: USAGE.input + USAGE.output,
    ...(thoughts === undefined ? {} : { thoughtsTokenCount: thoughts }),
  };
}

/** The response format the upstream received, however its protocol words it. */
function formatOf(kind: UpstreamKind, body: Json): unknown {
  if (kind === 'chat') return body.response_format;
  if (kind === 'responses') return body.text?.format;
  return body.output_config?.format;
}

describe.each(UPSTREAMS)('gemini client → %s upstream', (kind) => {
  const up = () => h.upstreams[kind];

  it('answers JSON with the system instruction, generation config and usage mapped', async () => {
    up().fake.reply({ text: ['Hello', ' world'], usage: USAGE });
    const response = await genai.models.generateContent({
      model: up().model,
      contents: 'Say hello',
      // Responses has no stop sequences (the gateway refuses them there).
      config: {
        systemInstruction: 'Be brief.',
        temperature: 0.5,
        topP: 0.9,
        maxOutputTokens: 100,
        ...(kind === 'responses' ? {} : { stopSequences: ['END'] }),
      },
    });

    expect(response.text).toBe('Hello world');
    expect(response.candidates?.[0]?.finishReason).toBe('STOP');
    expect(response.modelVersion).toBe(up().model);
    expect(response.usageMetadata).toEqual(expectedUsageMetadata(kind));

    const received = up().fake.last();
    expect(received.path).toBe(up().path);
    expect(received.body.model).toBe(up().upstreamModel);
    expect(received.body.stream ?? false).toBe(false);
    expect(promptOf(kind, received.body)).toEqual({ system: 'Be brief.', user: ['Say hello'] });
    const maxTokensField = { chat: 'max_completion_tokens', responses: 'max_output_tokens', anthropic: 'max_tokens' }[kind];
    expect(received.body[maxTokensField]).toBe(100);
    // Hints the upstream model refuses are dropped and named: GPT-5 (the Responses upstream's model)
    // takes neither temperature nor top_p, Claude Sonnet 4.5 not both.
    const dropped = { chat: undefined, responses: 'generationConfig.temperature, generationConfig.topP', anthropic: 'generationConfig.topP' }[kind];
    expect(response.sdkHttpResponse?.headers?.['x-infergate-dropped-params']).toBe(dropped);
    expect(received.body.temperature).toBe(kind === 'responses' ? undefined : 0.5);
    expect(received.body.top_p).toBe(kind === 'chat' ? 0.9 : undefined);
    if (kind !== 'responses') expect(received.body[kind === 'chat' ? 'stop' : 'stop_sequences']).toEqual(['END']);
    expectUpstreamCredentials(kind, received.headers);
    await expect.poll(() => h.usage.length).toBe(1);
    expect(h.usage[0]).toMatchObject({ model: up().model, status: 'ok', usage: { input: USAGE.input, output: USAGE.output } });
  });

  it('streams through generateContentStream, finishReason and usageMetadata on the last chunk', async () => {
    up().fake.reply({ text: ['Hel', 'lo ', 'wörld'], usage: USAGE });
    const stream = await genai.models.generateContentStream({ model: up().model, contents: question, config: { systemInstruction: 'Be brief.' } });
    const chunks: GenerateContentResponse[] = [];
    for await (const chunk of stream) chunks.push(chunk);

    expect(chunks.map((chunk) => chunk.text ?? '').join('')).toBe('Hello wörld');
    expect(chunks.filter((chunk) => chunk.text).map((chunk) => chunk.text)).toEqual(['Hel', 'lo ', 'wörld']);
    const last = chunks.at(-1)!;
    expect(last.candidates?.[0]?.finishReason).toBe('STOP');
    expect(last.usageMetadata).toEqual(expectedUsageMetadata(kind));
    expect(chunks.slice(0, -1).every((chunk) => chunk.usageMetadata === undefined && chunk.candidates?.[0]?.finishReason === undefined)).toBe(true);

    const received = up().fake.last();
    expect(received.body.stream).toBe(true);
    expect(promptOf(kind, received.body)).toEqual({ system: 'Be brief.', user: ['Weather and time in Paris?'] });
  });

  it('runs a two-turn tool loop: parallel function calls, then a functionResponse turn', async () => {
    const calls = parallelCalls(kind);
    up().fake.reply({ toolCalls: calls, usage: USAGE });
    const stream = await genai.models.generateContentStream({
      model: up().model,
      contents: question,
      config: { tools: [{ functionDeclarations: declarations }] },
    });
    const modelParts: Json[] = [];
    let finishReason: string | undefined;
    for await (const chunk of stream) {
      modelParts.push(...(chunk.candidates?.[0]?.content?.parts ?? []));
      finishReason = chunk.candidates?.[0]?.finishReason ?? finishReason;
    }
    const functionCalls = modelParts.filter((part) => part.functionCall).map((part) => part.functionCall);
    expect(functionCalls).toEqual([
      { id: calls[0]!.id, name: 'get_weather', args: { city: 'Paris' } },
      { id: calls[1]!.id, name: 'get_time', args: { tz: 'Europe/Paris' } },
    ]);
    expect(finishReason).toBe('STOP');
    const turn1 = up().fake.last().body;
    const sentTools = kind === 'chat' ? turn1.tools.map((t: Json) => t.function) : turn1.tools;
    expect(sentTools.map((t: Json) => t.name)).toEqual(['get_weather', 'get_time']);
    // Gemini's upper-case schema arrives as JSON Schema.
    expect(sentTools[1][kind === 'anthropic' ? 'input_schema' : 'parameters']).toEqual(TIME_SCHEMA);

    up().fake.reply({ text: ['It is 18°C at 14:05.'] });
    const second = await genai.models.generateContent({
      model: up().model,
      config: { tools: [{ functionDeclarations: declarations }] },
      contents: [
        ...question,
        { role: 'model', parts: modelParts },
        {
          role: 'user',
          parts: [
            { functionResponse: { id: functionCalls[0].id, name: 'get_weather', response: { output: '18°C' } } },
            // No id: matched to its call by name, as Gemini does for older models.
            { functionResponse: { name: 'get_time', response: { output: '14:05' } } },
          ],
        },
      ],
    });
    expect(second.text).toBe('It is 18°C at 14:05.');
    expect(toolExchange(kind, up().fake.last().body)).toEqual(weatherAndTimeExchange(calls[0]!.id, calls[1]!.id));
  });

  it('sends an inlineData image upstream as an image', async () => {
    up().fake.reply({ text: ['A red dot.'] });
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
    const response = await genai.models.generateContent({
      model: up().model,
      contents: [{ role: 'user', parts: [{ text: 'What is this?' }, { inlineData: { mimeType: 'image/png', data: png } }] }],
    });
    expect(response.text).toBe('A red dot.');
    const body = JSON.stringify(up().fake.last().body);
    expect(body).toContain(png);
    expect(body).toContain('image/png');
  });

  it('maps JSON mode (responseMimeType + responseSchema) to the upstream structured output', async () => {
    up().fake.reply({ text: ['{"city":"Paris"}'] });
    const response = await genai.models.generateContent({
      model: up().model,
      contents: 'Which city?',
      config: { responseMimeType: 'application/json', responseSchema: { type: Type.OBJECT, properties: { city: { type: Type.STRING } }, required: ['city'] } },
    });
    expect(JSON.parse(response.text!)).toEqual({ city: 'Paris' });
    const format = formatOf(kind, up().fake.last().body) as Json;
    expect(JSON.stringify(format)).toContain('"city":{"type":"string"}');
  });

  it('shows thoughts when asked, and carries the upstream reasoning back on the next turn', async () => {
    const calls = parallelCalls(kind).slice(0, 1);
    up().fake.reply({ reasoning: ['The user wants ', 'the weather.'], text: ['Let me check.'], toolCalls: calls });
    const config = { tools: [{ functionDeclarations: declarations }], thinkingConfig: { includeThoughts: true, thinkingBudget: 2048 } };
    const stream = await genai.models.generateContentStream({ model: up().model, contents: question, config });
    const modelParts: Json[] = [];
    for await (const chunk of stream) modelParts.push(...(chunk.candidates?.[0]?.content?.parts ?? []));
    if (kind !== 'chat') {
      expect(
        modelParts
          .filter((part) => part.thought)
          .map((part) => part.text)
          .join(''),
      ).toBe('The user wants the weather.');
    }
    expect(modelParts.filter((part) => !part.thought && part.text).map((part) => part.text)).toEqual(['Let me check.']);

    up().fake.reply({ text: ['18°C.'] });
    await genai.models.generateContent({
      model: up().model,
      config,
      contents: [
        ...question,
        { role: 'model', parts: modelParts },
        { role: 'user', parts: [{ functionResponse: { id: calls[0]!.id, name: 'get_weather', response: { output: '18°C' } } }] },
      ],
    });
    const received = up().fake.last().body;
    if (kind === 'anthropic') {
      expect(received.messages[1].content.map((block: Json) => block.type)).toEqual(['thinking', 'text', 'tool_use']);
      expect(received.messages[1].content[0].thinking).toBe('The user wants the weather.');
      expect(received.messages[1].content[0].signature).not.toMatch(/^infergate-/);
    }
    if (kind === 'responses') expect(received.input.find((item: Json) => item.type === 'reasoning')?.encrypted_content).toMatch(/^gAAAAA/);
  });

  it('passes an upstream 400 on with Google’s error shape', async () => {
    up().fake.reply({
      error: { status: 400, message: 'messages.0.content: string too long.', type: 'invalid_request_error', code: 'string_above_max_length' },
    });
    const error = await genai.models.generateContent({ model: up().model, contents: question }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(400);
    const body = JSON.parse((error as ApiError).message);
    expect(body.error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT', message: expect.stringContaining('string too long') });
  });

  it('passes an upstream 429 on a stream as RESOURCE_EXHAUSTED with its retry delay', async () => {
    up().fake.reply({ error: rateLimited(kind) });
    const error = await genai.models.generateContentStream({ model: up().model, contents: question }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(429);
    const body = JSON.parse((error as ApiError).message);
    expect(body.error).toMatchObject({ code: 429, status: 'RESOURCE_EXHAUSTED', message: expect.stringContaining('Rate limit reached') });
    expect(body.error.details).toContainEqual({ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '7s' });
  });

  it('makes the SDK throw when the upstream stream is cut mid-answer', async () => {
    up().fake.reply({ text: ['Once', ' upon', ' a time'], cutAfter: THROUGH_SECOND_DELTA[kind] });
    const texts: string[] = [];
    const error = await (async () => {
      for await (const chunk of await genai.models.generateContentStream({ model: up().model, contents: question })) texts.push(chunk.text ?? '');
    })().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).message).toContain('got status: UNAVAILABLE');
    expect(texts.join('')).toBe('Once upon');
  });
});

describe('gemini client → gemini upstream (through the IR)', () => {
  it('answers JSON with Gemini’s usage unchanged in meaning', async () => {
    gemini.reply({ text: ['Hello'], usage: USAGE });
    const response = await genai.models.generateContent({ model: 'gem-25', contents: 'Hi', config: { systemInstruction: 'Be brief.' } });
    expect(response.text).toBe('Hello');
    expect(response.usageMetadata).toEqual({
      promptTokenCount: USAGE.input,
      cachedContentTokenCount: USAGE.cachedRead,
      candidatesTokenCount: USAGE.output - USAGE.reasoning,
      thoughtsTokenCount: USAGE.reasoning,
      totalTokenCount: USAGE.input + USAGE.output,
    });
    expect(gemini.last().body.systemInstruction).toMatchObject({ parts: [{ text: 'Be brief.' }] });
  });

  it('gives a Gemini 3 thought signature to the client and back on the next turn, as the API demands', async () => {
    gemini.reply({ toolCalls: parallelCalls('chat').map(({ name, args }) => ({ name, args })) });
    const stream = await genai.models.generateContentStream({
      model: 'gem-3',
      contents: question,
      config: { tools: [{ functionDeclarations: declarations }] },
    });
    const modelParts: Json[] = [];
    for await (const chunk of stream) modelParts.push(...(chunk.candidates?.[0]?.content?.parts ?? []));
    const calls = modelParts.filter((part) => part.functionCall);
    expect(calls).toHaveLength(2);
    const issued = [...gemini.signatures];
    expect(calls[0]!.thoughtSignature).toBe(issued[0]);

    gemini.reply({ text: ['18°C at 14:05.'] });
    const second = await genai.models.generateContent({
      model: 'gem-3',
      config: { tools: [{ functionDeclarations: declarations }] },
      contents: [
        ...question,
        { role: 'model', parts: modelParts },
        {
          role: 'user',
          parts: calls.map((part) => ({ functionResponse: { id: part.functionCall.id, name: part.functionCall.name, response: { output: 'ok' } } })),
        },
      ],
    });
    expect(second.text).toBe('18°C at 14:05.');
    const replayed = gemini.last().body.contents[1].parts;
    expect(replayed[0]).toMatchObject({ functionCall: { name: 'get_weather' }, thoughtSignature: issued[0] });
  });

  it('never forwards another vendor’s reasoning carried in a thoughtSignature', async () => {
    gemini.reply({ text: ['ok'] });
    await genai.models.generateContent({
      model: 'gem-25',
      contents: [
        { role: 'user', parts: [{ text: 'Hi' }] },
        { role: 'model', parts: [{ text: 'Thinking.', thought: true, thoughtSignature: 'infergate-signature:EqQBClaude' }, { text: 'Hello.' }] },
        { role: 'user', parts: [{ text: 'Again' }] },
      ],
    });
    const sent = JSON.stringify(gemini.last().body);
    expect(sent).not.toContain('infergate-');
    expect(sent).not.toContain('EqQBClaude');
    expect(gemini.last().body.contents[1].parts).toEqual([{ text: 'Hello.' }]);
  });
});

describe('gemini client → local upstream', () => {
  it('answers JSON and streams, offline', async () => {
    const response = await genai.models.generateContent({ model: 'local-chat', contents: 'Hello there' });
    expect(response.text).toMatch(/\S/);
    expect(response.usageMetadata?.promptTokenCount).toBeGreaterThan(0);
    let text = '';
    let last: GenerateContentResponse | undefined;
    for await (const chunk of await genai.models.generateContentStream({ model: 'local-chat', contents: 'Hello there' })) {
      text += chunk.text ?? '';
      last = chunk;
    }
    expect(text).toBe(response.text);
    expect(last?.candidates?.[0]?.finishReason).toBe('STOP');
  });

  it('runs a tool loop with the SDK’s function calls', async () => {
    const tools = [{ functionDeclarations: declarations }];
    const first = await genai.models.generateContent({ model: 'local-chat', contents: 'Use the get_weather tool for Paris', config: { tools } });
    const call = first.functionCalls?.[0];
    expect(call?.name).toBe('get_weather');
    const second = await genai.models.generateContent({
      model: 'local-chat',
      config: { tools },
      contents: [
        { role: 'user', parts: [{ text: 'Use the get_weather tool for Paris' }] },
        first.candidates![0]!.content!,
        { role: 'user', parts: [{ functionResponse: { id: call!.id!, name: call!.name!, response: { output: '18°C and sunny' } } }] },
      ],
    });
    expect(second.text).toContain('18°C and sunny');
  });
});

describe('gemini endpoint', () => {
  const post = (path: string, body: unknown, headers: Record<string, string> = { 'x-goog-api-key': 'sk-test' }) =>
    fetch(h.url + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

  it('takes the key from ?key= too, and answers 401 UNAUTHENTICATED without one', async () => {
    h.upstreams.chat.fake.reply({ text: ['ok'] });
    const withQuery = await post('/v1beta/models/gpt-chat:generateContent?key=sk-test', { contents: [{ parts: [{ text: 'Hi' }] }] }, {});
    expect(withQuery.status).toBe(200);
    const missing = await post('/v1beta/models/gpt-chat:generateContent', { contents: [{ parts: [{ text: 'Hi' }] }] }, {});
    expect(missing.status).toBe(401);
    expect(await missing.json()).toEqual({
      error: { code: 401, status: 'UNAUTHENTICATED', message: expect.stringContaining('x-goog-api-key'), details: expect.any(Array) },
    });
  });

  it('answers a malformed body with 400 INVALID_ARGUMENT naming the field', async () => {
    const response = await post('/v1beta/models/gpt-chat:generateContent', { contents: [{ role: 'user', parts: 'Hi' }] });
    expect(response.status).toBe(400);
    const body = await response.json();
    expect(body.error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT', message: expect.stringContaining("'contents[0].parts'") });
    expect(body.error.details).toContainEqual({
      '@type': 'type.googleapis.com/google.rpc.BadRequest',
      fieldViolations: [{ field: 'contents[0].parts', description: expect.any(String) }],
    });
  });

  it('refuses a bad role, candidateCount above 1 and a stream without alt=sse, each naming its field', async () => {
    const cases: [string, Json, string][] = [
      ['/v1beta/models/gpt-chat:generateContent', { contents: [{ role: 'system', parts: [{ text: 'Hi' }] }] }, 'contents[0].role'],
      [
        '/v1beta/models/gpt-chat:generateContent',
        { contents: [{ parts: [{ text: 'Hi' }] }], generationConfig: { candidateCount: 2 } },
        'generationConfig.candidateCount',
      ],
      ['/v1beta/models/gpt-chat:streamGenerateContent', { contents: [{ parts: [{ text: 'Hi' }] }] }, 'alt'],
    ];
    for (const [path, body, field] of cases) {
      const response = await post(path, body);
      expect(response.status, field).toBe(400);
      const error = (await response.json()).error;
      expect(error.status).toBe('INVALID_ARGUMENT');
      expect(error.message).toContain(field === 'alt' ? 'alt=sse' : `'${field}'`);
    }
  });

  it('reads snake_case fields and a model name with the models/ prefix', async () => {
    h.upstreams.chat.fake.reply({ text: ['ok'] });
    const response = await post('/v1beta/models/models/gpt-chat:generateContent', {
      system_instruction: { parts: [{ text: 'Be brief.' }] },
      contents: [{ role: 'user', parts: [{ text: 'Hi' }, { inline_data: { mime_type: 'image/png', data: 'AAAA' } }] }],
      generation_config: { max_output_tokens: 20, stop_sequences: ['END'] },
    });
    expect(response.status).toBe(200);
    const received = h.upstreams.chat.fake.last().body;
    expect(received.model).toBe('gpt-4.1');
    expect(received.max_completion_tokens).toBe(20);
    expect(received.stop).toEqual(['END']);
    expect(promptOf('chat', received).system).toBe('Be brief.');
    expect(JSON.stringify(received.messages)).toContain('data:image/png;base64,AAAA');
  });

  it('answers an unknown model and a model outside the key’s scope alike with 404 NOT_FOUND, listing only its scope', async () => {
    const unknown = await post('/v1beta/models/nope:generateContent', { contents: [{ parts: [{ text: 'Hi' }] }] });
    expect(unknown.status).toBe(404);
    expect((await unknown.json()).error).toMatchObject({ status: 'NOT_FOUND', message: expect.stringContaining('nope') });

    const gateway = createGateway({
      keys: [{ key: 'sk-scoped', models: ['local-chat'] }],
      providers: { local: createLocalProvider({ chunkDelayMs: 0 }) },
      models: [
        { id: 'local-chat', provider: 'local' },
        { id: 'local-other', provider: 'local', upstreamModel: 'local-chat' },
      ],
      logger: false,
    });
    const served = await serve(gateway);
    try {
      const scoped = new GoogleGenAI({ apiKey: 'sk-scoped', httpOptions: { baseUrl: served.url } });
      const error = await scoped.models.generateContent({ model: 'local-other', contents: 'Hi' }).catch((e: unknown) => e);
      expect((error as ApiError).status).toBe(404);
      expect(JSON.parse((error as ApiError).message).error).toMatchObject({ code: 404, status: 'NOT_FOUND' });
      const names: string[] = [];
      for await (const model of await scoped.models.list()) names.push(model.name!);
      expect(names).toEqual(['models/local-chat']);
    } finally {
      await served.close();
    }
  });

  it('lists the key’s text models in Google’s shape, pages them, and gets one', async () => {
    const pager = await genai.models.list({ config: { pageSize: 2 } });
    const names: string[] = [];
    for await (const model of pager) names.push(model.name!);
    expect(names).toEqual(['models/gpt-chat', 'models/gpt-resp', 'models/claude', 'models/local-chat', 'models/gem-3', 'models/gem-25']);
    const one = await genai.models.get({ model: 'claude' });
    expect(one).toMatchObject({ name: 'models/claude', supportedActions: ['generateContent', 'streamGenerateContent', 'countTokens'] });
    const missing = await genai.models.get({ model: 'nope' }).catch((e: unknown) => e);
    expect((missing as ApiError).status).toBe(404);

    const openaiList = await (await fetch(h.url + '/v1/models', { headers: { authorization: 'Bearer sk-test' } })).json();
    expect(openaiList.data[0].supported_endpoint_types).toContain('gemini');
  });
});
