import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import type { FunctionTool, ResponseInputItem } from 'openai/resources/responses/responses';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../src/config.js';
import { createGateway } from '../../src/gateway.js';
import type { UsageEvent } from '../../src/options.js';
import { createGeminiProvider } from '../../src/providers/gemini/gemini-provider.js';
import { startFakeGemini } from '../fakes/fake-gemini.js';
import type { NeutralUsage } from '../fakes/fake-server.js';
import { serve, type Served } from '../helpers/serve.js';
import { TIME_SCHEMA, WEATHER_SCHEMA } from './harness.js';

type Json = Record<string, any>;

/**
 * The three client protocols (real `openai` and `@anthropic-ai/sdk` clients) against the Gemini
 * API through the `gemini` provider, JSON and streamed: prompts and parts mapped, usage with
 * cached and thinking tokens in each protocol's own terms, reasoning, images, and two-turn tool
 * loops on a Gemini 3 model whose fake refuses a replayed call without the signature it issued.
 */
let fake: Awaited<ReturnType<typeof startFakeGemini>>;
let served: Served;
let openai: OpenAI;
let anthropic: Anthropic;
const usage: UsageEvent[] = [];
let provider: ReturnType<typeof createGeminiProvider>;

beforeAll(async () => {
  fake = await startFakeGemini();
  provider = createGeminiProvider({ baseURL: fake.url, apiKey: 'up-key' });
  const gateway = createGateway({
    keys: [{ key: 'sk-test' }],
    providers: { gem: provider },
    models: [
      { id: 'gem3', provider: 'gem', upstreamModel: 'gemini-3-pro-preview' },
      { id: 'gem25', provider: 'gem', upstreamModel: 'gemini-2.5-flash' },
    ],
    logger: false,
    hooks: { onUsage: (event) => void usage.push(event) },
  });
  served = await serve(gateway);
  openai = new OpenAI({ baseURL: `${served.url}/v1`, apiKey: 'sk-test', maxRetries: 0 });
  anthropic = new Anthropic({ baseURL: served.url, apiKey: 'sk-test', maxRetries: 0 });
});
afterAll(async () => {
  await served.close();
  await fake.close();
  await provider.close?.();
});
beforeEach(() => {
  fake.reset();
  usage.length = 0;
});

/** Gemini has no cache-write counter; thinking is apart from the candidates in Gemini's own usage. */
const USAGE: Required<Omit<NeutralUsage, 'cacheWrite'>> = { input: 1300, cachedRead: 1000, output: 57, reasoning: 20 };
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
const CALLS = [
  { name: 'get_weather', args: ['{"city":"Paris"}'] },
  { name: 'get_time', args: ['{"tz":"Europe/Paris"}'] },
];

/** What the fake received: path, key, system text, and the contents in short. */
function received() {
  const last = fake.last();
  return { last, body: last.body as Json, contents: last.body.contents as Json[] };
}

function expectGeminiCall(model: string, stream: boolean): void {
  const { last } = received();
  expect(last.url).toBe(`/v1beta/models/${model}:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`);
  expect(last.headers['x-goog-api-key']).toBe('up-key');
  expect(JSON.stringify(last.headers)).not.toContain('sk-test');
}

/** The replayed model turn: its first call carries a signature the fake issued, the second none. */
function expectSignedReplay(): void {
  const { contents } = received();
  const model = contents.find((content) => content.role === 'model' && content.parts.some((part: Json) => part.functionCall))!;
  const calls = model.parts.filter((part: Json) => part.functionCall);
  expect(calls.map((part: Json) => part.functionCall.name)).toEqual(['get_weather', 'get_time']);
  expect(fake.signatures.has(calls[0].thoughtSignature)).toBe(true);
  expect(calls[1].thoughtSignature).toBeUndefined();
  const results = contents.at(-1)!.parts.map((part: Json) => part.functionResponse);
  expect(results).toEqual([
    { id: expect.any(String), name: 'get_weather', response: { output: '18°C' } },
    { id: expect.any(String), name: 'get_time', response: { output: '14:05' } },
  ]);
  expect(results.map((result: Json) => result.id)).toEqual(calls.map((part: Json) => part.functionCall.id));
}

describe.each([false, true])('chat client → gemini (stream: %s)', (stream) => {
  const tools: ChatCompletionTool[] = [
    { type: 'function', function: { name: 'get_weather', description: 'Weather of a city', parameters: WEATHER_SCHEMA } },
    { type: 'function', function: { name: 'get_time', parameters: TIME_SCHEMA } },
  ];
  const question: ChatCompletionMessageParam[] = [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'Weather and time in Paris?' },
  ];
  /** The answer, and the reasoning text as the client saw it (the SDK's stream accumulator keeps only the last `reasoning_content` delta). */
  const complete = async (body: Omit<OpenAI.ChatCompletionCreateParamsNonStreaming, 'stream'>) => {
    if (!stream) {
      const completion = await openai.chat.completions.create(body);
      return Object.assign(completion, { reasoning: (completion.choices[0]!.message as Json).reasoning_content as string | undefined });
    }
    const run = openai.chat.completions.stream({ ...body, stream_options: { include_usage: true } });
    let reasoning: string | undefined;
    run.on('chunk', (chunk) => {
      const delta = chunk.choices[0]?.delta as Json | undefined;
      if (typeof delta?.reasoning_content === 'string') reasoning = (reasoning ?? '') + delta.reasoning_content;
    });
    return Object.assign(await run.finalChatCompletion(), { reasoning });
  };

  it('answers with reasoning, the usage in Chat terms, an image mapped to inlineData', async () => {
    fake.reply({ reasoning: ['Looking', ' closely.'], text: ['A red', ' dot.'], usage: USAGE });
    const completion = await complete({
      model: 'gem25',
      reasoning_effort: 'low',
      max_completion_tokens: 300,
      messages: [
        { role: 'system', content: 'Be brief.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
          ],
        },
      ],
    });
    expect(completion.choices[0]!.message.content).toBe('A red dot.');
    expect(completion.reasoning).toBe('Looking closely.');
    expect(completion.usage).toMatchObject({
      prompt_tokens: 1300,
      completion_tokens: 57,
      total_tokens: 1357,
      prompt_tokens_details: { cached_tokens: 1000 },
      completion_tokens_details: { reasoning_tokens: 20 },
    });
    expectGeminiCall('gemini-2.5-flash', stream);
    const { body } = received();
    expect(body.systemInstruction).toEqual({ parts: [{ text: 'Be brief.' }] });
    expect(body.contents).toEqual([{ role: 'user', parts: [{ text: 'What is this?' }, { inlineData: { mimeType: 'image/png', data: PNG } }] }]);
    expect(body.generationConfig).toEqual({ maxOutputTokens: 300, thinkingConfig: { thinkingBudget: 1024, includeThoughts: true } });
    await expect.poll(() => usage.length).toBe(1);
    expect(usage[0]).toMatchObject({ status: 'ok', usage: { input: 1300, cachedRead: 1000, output: 57, reasoning: 20 } });
  });

  it('runs a two-turn parallel tool loop on Gemini 3, the signature carried in the tool call id', async () => {
    fake.reply({ toolCalls: CALLS, usage: USAGE });
    const first = await complete({ model: 'gem3', messages: question, tools });
    const choice = first.choices[0]!;
    expect(choice.finish_reason).toBe('tool_calls');
    const toolCalls = choice.message.tool_calls!.map((call) => (call.type === 'function' ? call : undefined)!);
    expect(toolCalls.map((call) => [call.function.name, JSON.parse(call.function.arguments)])).toEqual([
      ['get_weather', { city: 'Paris' }],
      ['get_time', { tz: 'Europe/Paris' }],
    ]);
    expect(received().body.tools[0].functionDeclarations.map((declaration: Json) => declaration.name)).toEqual(['get_weather', 'get_time']);

    const replay = (ids: string[]): ChatCompletionMessageParam[] => [
      ...question,
      {
        role: 'assistant',
        content: null,
        tool_calls: toolCalls.map((call, i) => ({ id: ids[i]!, type: 'function' as const, function: call.function })),
      },
      { role: 'tool', tool_call_id: ids[0]!, content: '18°C' },
      { role: 'tool', tool_call_id: ids[1]!, content: '14:05' },
    ];
    fake.reply({ text: ['It is 18°C at 14:05.'] });
    const second = await complete({ model: 'gem3', tools, messages: replay(toolCalls.map((call) => call.id)) });
    expect(second.choices[0]!.message.content).toBe('It is 18°C at 14:05.');
    expectSignedReplay();

    // Ids that lost the signature (a client that re-keys calls) go with Google's skip value, never a forged signature.
    fake.reply({ text: ['It is 18°C at 14:05.'] });
    const bare = toolCalls.map((call) => call.id.split('__')[0]!);
    await complete({ model: 'gem3', tools, messages: replay(bare) });
    const model = received().contents.find((content) => content.role === 'model')!;
    expect(model.parts.map((part: Json) => part.thoughtSignature)).toEqual(['skip_thought_signature_validator', undefined]);
  });
});

describe.each([false, true])('responses client → gemini (stream: %s)', (stream) => {
  const tools: FunctionTool[] = [
    { type: 'function', name: 'get_weather', description: 'Weather of a city', parameters: WEATHER_SCHEMA, strict: false },
    { type: 'function', name: 'get_time', parameters: TIME_SCHEMA, strict: false },
  ];
  const question: ResponseInputItem[] = [{ role: 'user', content: 'Weather and time in Paris?' }];
  const respond = (body: Omit<OpenAI.Responses.ResponseCreateParamsNonStreaming, 'stream'>) =>
    stream ? openai.responses.stream(body).finalResponse() : openai.responses.create(body);

  it('answers with a reasoning summary, the usage in Responses terms, an image mapped to inlineData', async () => {
    fake.reply({ reasoning: ['Looking', ' closely.'], text: ['A red', ' dot.'], usage: USAGE });
    const response = await respond({
      model: 'gem25',
      instructions: 'Be brief.',
      reasoning: { effort: 'high', summary: 'auto' },
      store: false,
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'What is this?' },
            { type: 'input_image', image_url: `data:image/png;base64,${PNG}`, detail: 'auto' },
          ],
        },
      ],
    });
    expect(response.output_text).toBe('A red dot.');
    const reasoning = response.output.find((item) => item.type === 'reasoning');
    expect(reasoning?.type === 'reasoning' && reasoning.summary.map((part) => part.text).join('')).toBe('Looking closely.');
    expect(response.usage).toMatchObject({
      input_tokens: 1300,
      input_tokens_details: { cached_tokens: 1000 },
      output_tokens: 57,
      output_tokens_details: { reasoning_tokens: 20 },
      total_tokens: 1357,
    });
    expectGeminiCall('gemini-2.5-flash', stream);
    const { body } = received();
    expect(body.systemInstruction).toEqual({ parts: [{ text: 'Be brief.' }] });
    expect(body.contents[0].parts[1]).toEqual({ inlineData: { mimeType: 'image/png', data: PNG } });
    expect(body.generationConfig.thinkingConfig).toEqual({ thinkingBudget: 24576, includeThoughts: true });
  });

  it('runs a two-turn parallel tool loop on Gemini 3, the signature carried in a reasoning item and in the call id', async () => {
    fake.reply({ toolCalls: CALLS, usage: USAGE });
    const first = await respond({ model: 'gem3', input: question, tools, store: false });
    const output: OpenAI.Responses.ResponseOutputItem[] = first.output;
    const calls = output.filter((item): item is OpenAI.Responses.ResponseFunctionToolCall => item.type === 'function_call');
    expect(calls.map((call) => [call.name, JSON.parse(call.arguments)])).toEqual([
      ['get_weather', { city: 'Paris' }],
      ['get_time', { tz: 'Europe/Paris' }],
    ]);
    const carrier = first.output.find((item) => item.type === 'reasoning');
    expect(carrier?.type === 'reasoning' && carrier.encrypted_content).toMatch(/^infergate-gemini:/);

    fake.reply({ text: ['It is 18°C at 14:05.'] });
    const outputs: ResponseInputItem[] = [
      { type: 'function_call_output', call_id: calls[0]!.call_id, output: '18°C' },
      { type: 'function_call_output', call_id: calls[1]!.call_id, output: '14:05' },
    ];
    const second = await respond({ model: 'gem3', tools, store: false, input: [...question, ...(first.output as ResponseInputItem[]), ...outputs] });
    expect(second.output_text).toBe('It is 18°C at 14:05.');
    expectSignedReplay();

    // Without the reasoning item (no `include`), the signature comes back in the call id.
    fake.reply({ text: ['It is 18°C at 14:05.'] });
    const callsOnly = (first.output as ResponseInputItem[]).filter((item) => item.type !== 'reasoning');
    await respond({ model: 'gem3', tools, store: false, input: [...question, ...callsOnly, ...outputs] });
    expectSignedReplay();
  });
});

describe.each([false, true])('messages client → gemini (stream: %s)', (stream) => {
  const tools: Anthropic.Tool[] = [
    { name: 'get_weather', description: 'Weather of a city', input_schema: WEATHER_SCHEMA as Anthropic.Tool.InputSchema },
    { name: 'get_time', input_schema: TIME_SCHEMA as Anthropic.Tool.InputSchema },
  ];
  const question: Anthropic.MessageParam[] = [{ role: 'user', content: 'Weather and time in Paris?' }];
  const create = (body: Omit<Anthropic.MessageCreateParamsNonStreaming, 'stream'>) =>
    stream ? anthropic.messages.stream(body).finalMessage() : anthropic.messages.create(body);

  it('answers with thinking, the usage in Messages terms (cache apart), an image mapped to inlineData', async () => {
    fake.reply({ reasoning: ['Looking', ' closely.'], text: ['A red', ' dot.'], usage: USAGE });
    const message = await create({
      model: 'gem25',
      system: 'Be brief.',
      max_tokens: 4096,
      thinking: { type: 'enabled', budget_tokens: 2048 },
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
          ],
        },
      ],
    });
    const thinking = message.content.filter((block) => block.type === 'thinking');
    expect(thinking.map((block) => block.thinking).join('')).toBe('Looking closely.');
    expect(
      message.content
        .filter((block) => block.type === 'text')
        .map((block) => block.text)
        .join(''),
    ).toBe('A red dot.');
    expect(message.usage).toMatchObject({ input_tokens: 300, cache_read_input_tokens: 1000, cache_creation_input_tokens: 0, output_tokens: 57 });
    expectGeminiCall('gemini-2.5-flash', stream);
    const { body } = received();
    expect(body.systemInstruction).toEqual({ parts: [{ text: 'Be brief.' }] });
    expect(body.contents[0].parts[1]).toEqual({ inlineData: { mimeType: 'image/png', data: PNG } });
    expect(body.generationConfig).toEqual({ maxOutputTokens: 4096, thinkingConfig: { thinkingBudget: 2048, includeThoughts: true } });
  });

  it('runs a two-turn parallel tool loop on Gemini 3, the signature carried in a thinking block and in the tool_use id; Claude’s own signatures are dropped', async () => {
    fake.reply({ toolCalls: CALLS, usage: USAGE });
    const first = await create({ model: 'gem3', max_tokens: 1024, messages: question, tools });
    expect(first.stop_reason).toBe('tool_use');
    const toolUses = first.content.filter((block) => block.type === 'tool_use');
    expect(toolUses.map((block) => [block.name, block.input])).toEqual([
      ['get_weather', { city: 'Paris' }],
      ['get_time', { tz: 'Europe/Paris' }],
    ]);
    const carrier = first.content.find((block) => block.type === 'thinking');
    expect(carrier?.type === 'thinking' && carrier.signature).toMatch(/^infergate-gemini:/);

    fake.reply({ text: ['It is 18°C at 14:05.'] });
    const results: Anthropic.MessageParam = {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: toolUses[0]!.id, content: '18°C' },
        { type: 'tool_result', tool_use_id: toolUses[1]!.id, content: [{ type: 'text', text: '14:05' }] },
      ],
    };
    const claudeTurn: Anthropic.MessageParam[] = [
      { role: 'user', content: 'Earlier question' },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'Claude thought', signature: 'EqQBCgIYAhIMclaude' },
          { type: 'text', text: 'Earlier answer' },
        ],
      },
    ];
    const second = await create({
      model: 'gem3',
      max_tokens: 1024,
      tools,
      messages: [...claudeTurn, ...question, { role: 'assistant', content: first.content }, results],
    });
    expect(second.content.filter((block) => block.type === 'text')).toEqual([expect.objectContaining({ text: 'It is 18°C at 14:05.' })]);
    expectSignedReplay();
    // The Claude turn went without its thinking: never a signature Gemini did not issue.
    expect(received().contents[1]).toEqual({ role: 'model', parts: [{ text: 'Earlier answer' }] });

    // Without the thinking block, the signature comes back in the tool_use id.
    fake.reply({ text: ['It is 18°C at 14:05.'] });
    const toolUsesOnly = first.content.filter((block) => block.type !== 'thinking');
    await create({ model: 'gem3', max_tokens: 1024, tools, messages: [...question, { role: 'assistant', content: toolUsesOnly }, results] });
    expectSignedReplay();
  });
});

describe('gemini client → gemini (passthrough)', () => {
  const post = (model: string, method: string, body: Json) =>
    fetch(`${served.url}/v1beta/models/${model}:${method}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-goog-api-key': 'sk-test' },
      body: JSON.stringify(body),
    });
  const question = { role: 'user', parts: [{ text: 'Weather in Paris?' }] };
  const tools = [{ functionDeclarations: [{ name: 'get_weather', parameters: { type: 'OBJECT', properties: { city: { type: 'STRING' } } } }] }];

  it('sends the body as the client wrote it, the upstream model in the path, and the answer back byte for byte', async () => {
    fake.reply({ toolCalls: CALLS.slice(0, 1), usage: USAGE });
    const response = await post('gem3', 'generateContent', { contents: [question], tools });
    expect(response.status).toBe(200);
    const answer = (await response.json()) as Json;
    expectGeminiCall('gemini-3-pro-preview', false);
    expect(received().body).toEqual({ contents: [question], tools });
    expect(answer.responseId).toMatch(/^fake-gemini-resp-/);
    const signed = answer.candidates[0].content;
    expect(fake.signatures.has(signed.parts[0].thoughtSignature)).toBe(true);
    await expect.poll(() => usage.length).toBe(1);
    expect(usage[0]).toMatchObject({ status: 'ok', usage: { input: 1300, cachedRead: 1000, output: 57, reasoning: 20 } });

    // The second turn replays the model's content as it came, signature included.
    const results = { role: 'user', parts: [{ functionResponse: { id: signed.parts[0].functionCall.id, name: 'get_weather', response: { output: '18°C' } } }] };
    fake.reply({ text: ['It is', ' 18°C.'] });
    const stream = await post('gem3', 'streamGenerateContent?alt=sse', { contents: [question, signed, results], tools });
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const text = await stream.text();
    expectGeminiCall('gemini-3-pro-preview', true);
    const chunks = text
      .split('\n\n')
      .filter((frame) => frame.startsWith('data: '))
      .map((frame) => JSON.parse(frame.slice(6)));
    expect(chunks.flatMap((chunk) => chunk.candidates[0].content.parts.map((part: Json) => part.text)).join('')).toBe('It is 18°C.');
    expect(chunks.at(-1).candidates[0].finishReason).toBe('STOP');
  });
});

describe('gemini upstream failures', () => {
  const ask = () => openai.chat.completions.create({ model: 'gem25', messages: [{ role: 'user', content: 'Hi' }] });
  const failure = () =>
    ask().then(
      () => expect.fail('the request succeeded'),
      (error: unknown) => error as InstanceType<typeof OpenAI.APIError>,
    );

  it('keeps a 429 with Google’s RetryInfo as retry-after, a 400 with its message, and makes a 403 a 502', async () => {
    fake.reply({ error: { status: 429, message: 'Resource has been exhausted (e.g. check quota).' } });
    const limited = await failure();
    expect(limited).toMatchObject({ status: 429, message: expect.stringContaining('Resource has been exhausted') });
    expect(limited.headers?.get('retry-after')).toBe('7');

    fake.reply({ error: { status: 400, message: 'Invalid JSON payload received. Unknown name "foo" at \'request\': Cannot find field.' } });
    await expect(ask()).rejects.toMatchObject({ status: 400, message: expect.stringContaining('Unknown name "foo"') });

    fake.reply({ error: { status: 403, message: 'Permission denied: key AIza-secret' } });
    const denied = await failure();
    expect(denied.status).toBe(502);
    expect(denied.message).not.toContain('AIza-secret');
  });

  it('ends a cut stream and an in-stream error as each client’s error, never as a finished answer', async () => {
    fake.reply({ text: ['Once', ' upon', ' a time'], cutAfter: 1 });
    const cut = anthropic.messages.stream({ model: 'gem25', max_tokens: 64, messages: [{ role: 'user', content: 'Story' }] });
    await expect(cut.finalMessage()).rejects.toThrow();

    fake.reply({ text: ['Once', ' upon', ' a time'], streamError: { after: 1, status: 503, message: 'The model is overloaded.' } });
    const failed = openai.chat.completions.stream({ model: 'gem25', messages: [{ role: 'user', content: 'Story' }] });
    await expect(failed.finalChatCompletion()).rejects.toThrow(/overloaded/);
  });
});

describe('gemini safety stops', () => {
  const blocked = JSON.stringify({
    candidates: [{ index: 0, finishReason: 'SAFETY', content: { role: 'model', parts: [{ text: 'I can' }] }, safetyRatings: [] }],
    usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 2, totalTokenCount: 7 },
  });

  it('reports a SAFETY finish as each protocol’s content filter', async () => {
    fake.reply({ raw: blocked });
    const chat = await openai.chat.completions.create({ model: 'gem25', messages: [{ role: 'user', content: 'Hi' }] });
    expect(chat.choices[0]!.finish_reason).toBe('content_filter');

    fake.reply({ raw: blocked });
    const response = await openai.responses.create({ model: 'gem25', input: 'Hi', store: false });
    expect(response).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'content_filter' } });

    fake.reply({ raw: blocked });
    const message = await anthropic.messages.create({ model: 'gem25', max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] });
    expect(message.stop_reason).toBe('refusal');
  });
});

describe('gemini in the config file', () => {
  const config = (provider: Json) => ({
    keys: [{ key: 'sk-test' }],
    providers: { gem: provider },
    models: [{ id: 'g', provider: 'gem', upstreamModel: 'gemini-2.5-flash' }],
  });

  it('builds the provider from `type: "gemini"` and refuses unknown fields', async () => {
    const parsed = parseConfig(config({ type: 'gemini', apiKey: 'AIza-x', baseURL: 'https://generativelanguage.googleapis.com' }));
    expect(parsed.providers.gem).toMatchObject({ type: 'gemini', text: { nativeProtocols: ['gemini'] } });
    await parsed.providers.gem!.close?.();
    expect(() => parseConfig(config({ type: 'gemini', project: 'p' }))).toThrow(ConfigError);
  });
});
