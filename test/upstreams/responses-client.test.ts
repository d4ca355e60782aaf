import OpenAI from 'openai';
import type { FunctionTool, ResponseInputItem } from 'openai/resources/responses/responses';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  NATIVE,
  THROUGH_SECOND_DELTA,
  TIME_SCHEMA,
  UPSTREAMS,
  USAGE,
  WEATHER_SCHEMA,
  expectUpstreamCredentials,
  expectedUsage,
  parallelCalls,
  promptOf,
  rateLimited,
  scopedCacheKey,
  startHarness,
  toolExchange,
  type Harness,
  weatherAndTimeExchange,
} from './harness.js';

/** The OpenAI SDK's Responses client against each upstream protocol. */
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());
beforeEach(() => h.reset());

const tools: FunctionTool[] = [
  { type: 'function', name: 'get_weather', description: 'Weather of a city', parameters: WEATHER_SCHEMA, strict: false },
  { type: 'function', name: 'get_time', parameters: TIME_SCHEMA, strict: false },
];
const instructions = 'Be brief.';
const question: ResponseInputItem[] = [{ role: 'user', content: 'Weather and time in Paris?' }];

describe.each(UPSTREAMS)('responses client → %s upstream', (kind) => {
  const up = () => h.upstreams[kind];
  const passthrough = NATIVE[kind] === 'responses';

  it('answers JSON, with the usage converted and the request mapped', async () => {
    up().fake.reply({ text: ['Hello', ' world'], usage: USAGE });
    const response = await h.openai.responses.create({ model: up().model, instructions, input: 'Say hello', max_output_tokens: 100, temperature: 0.5 });

    expect(response.object).toBe('response');
    expect(response.status).toBe('completed');
    expect(response.output_text).toBe('Hello world');
    expect(response.model).toBe(passthrough ? 'gpt-5-2025-08-07' : up().model);
    expect(response.usage).toEqual(expectedUsage(kind, 'responses', USAGE));

    const received = up().fake.last();
    expect(received.path).toBe(up().path);
    expect(received.body.model).toBe(up().upstreamModel);
    expect(received.body.stream ?? false).toBe(false);
    expect(promptOf(kind, received.body)).toEqual({ system: 'Be brief.', user: ['Say hello'] });
    const maxTokensField = { chat: 'max_completion_tokens', responses: 'max_output_tokens', anthropic: 'max_tokens' }[kind];
    expect(received.body[maxTokensField]).toBe(100);
    expect(received.body.temperature).toBe(0.5);
    expectUpstreamCredentials(kind, received.headers);
    await expect.poll(() => h.usage.length).toBe(1);
    expect(h.usage[0]).toMatchObject({ model: up().model, status: 'ok', usage: { input: USAGE.input, cachedRead: USAGE.cachedRead, output: USAGE.output } });
  });

  it('streams through the SDK helper, with usage at the end', async () => {
    up().fake.reply({ text: ['Hel', 'lo ', 'wörld'], usage: USAGE });
    const stream = h.openai.responses.stream({ model: up().model, instructions, input: question });
    const deltas: string[] = [];
    stream.on('response.output_text.delta', (event) => deltas.push(event.delta));
    const final = await stream.finalResponse();

    expect(deltas).toEqual(['Hel', 'lo ', 'wörld']);
    expect(final.status).toBe('completed');
    expect(final.output_text).toBe('Hello wörld');
    expect(final.usage).toEqual(expectedUsage(kind, 'responses', USAGE));

    const received = up().fake.last();
    expect(received.body.stream).toBe(true);
    if (kind === 'chat') expect(received.body.stream_options).toEqual({ include_usage: true });
    expect(promptOf(kind, received.body)).toEqual({ system: 'Be brief.', user: ['Weather and time in Paris?'] });
  });

  it('runs a two-turn tool loop with two parallel calls streamed in fragments', async () => {
    const calls = parallelCalls(kind);
    up().fake.reply({ toolCalls: calls, usage: USAGE });
    const first = await h.openai.responses.stream({ model: up().model, instructions, input: question, tools, parallel_tool_calls: true }).finalResponse();

    const functionCalls = first.output.filter((item) => item.type === 'function_call');
    expect(functionCalls.map((call) => [call.call_id, call.name, JSON.parse(call.arguments)])).toEqual([
      [calls[0]!.id, 'get_weather', { city: 'Paris' }],
      [calls[1]!.id, 'get_time', { tz: 'Europe/Paris' }],
    ]);
    const turn1 = up().fake.last().body;
    const sentTools = kind === 'chat' ? turn1.tools.map((t: any) => t.function.name) : turn1.tools.map((t: any) => t.name);
    expect(sentTools).toEqual(['get_weather', 'get_time']);

    up().fake.reply({ text: ['It is 18°C at 14:05.'] });
    // As the SDK docs show it: the previous output items are sent back as they are.
    const second = await h.openai.responses.create({
      model: up().model,
      instructions,
      tools,
      input: [
        ...question,
        ...(first.output as ResponseInputItem[]),
        { type: 'function_call_output', call_id: functionCalls[0]!.call_id, output: '18°C' },
        { type: 'function_call_output', call_id: functionCalls[1]!.call_id, output: '14:05' },
      ],
    });
    expect(second.output_text).toBe('It is 18°C at 14:05.');

    expect(toolExchange(kind, up().fake.last().body)).toEqual(weatherAndTimeExchange(calls[0]!.id, calls[1]!.id));
  });

  it('carries reasoning through a tool loop', async () => {
    const calls = parallelCalls(kind).slice(0, 1);
    up().fake.reply({ reasoning: ['The user wants ', 'the weather.'], toolCalls: calls });
    const first = await h.openai.responses
      .stream({
        model: up().model,
        input: question,
        tools,
        reasoning: { effort: 'low', summary: 'auto' },
        include: ['reasoning.encrypted_content'],
        store: false,
      })
      .finalResponse();
    const reasoning = first.output.find((item) => item.type === 'reasoning');
    if (kind !== 'chat') expect(reasoning?.summary.map((part) => part.text).join('')).toBe('The user wants the weather.');

    up().fake.reply({ text: ['18°C.'] });
    const second = await h.openai.responses.create({
      model: up().model,
      tools,
      store: false,
      include: ['reasoning.encrypted_content'],
      input: [...question, ...(first.output as ResponseInputItem[]), { type: 'function_call_output', call_id: calls[0]!.id, output: '18°C' }],
    });
    expect(second.output_text).toBe('18°C.');
    const received = up().fake.last().body;
    if (kind === 'anthropic') {
      // Claude's own thinking goes back signed, right before the tool use.
      expect(received.messages[1].content.map((block: any) => block.type)).toEqual(['thinking', 'tool_use']);
      expect(received.messages[1].content[0].signature).toMatch(/^EqQB/);
    }
    if (kind === 'responses') expect(received.input.find((item: any) => item.type === 'reasoning')?.encrypted_content).toMatch(/^gAAAAA/);
  });

  it('passes an upstream 400 on with its status, message and the OpenAI error shape', async () => {
    up().fake.reply({
      error: { status: 400, message: "Invalid 'input[0].content': string too long.", type: 'invalid_request_error', code: 'string_above_max_length' },
    });
    const error = await h.openai.responses.create({ model: up().model, input: question }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    const apiError = error as InstanceType<typeof OpenAI.BadRequestError>;
    expect(apiError.status).toBe(400);
    expect(apiError.message).toContain("Invalid 'input[0].content': string too long.");
    expect(apiError.error).toMatchObject({ message: "Invalid 'input[0].content': string too long.", type: 'invalid_request_error' });
  });

  it('passes an upstream 429 on a stream with its retry headers, not the operator’s rate-limit headers', async () => {
    up().fake.reply({ error: rateLimited(kind) });
    const error = await h.openai.responses
      .stream({ model: up().model, input: question })
      .finalResponse()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    const apiError = error as InstanceType<typeof OpenAI.RateLimitError>;
    expect(apiError.message).toContain('Rate limit reached for requests');
    expect(apiError.headers?.get('retry-after')).toBe('7');
    expect(apiError.headers?.get(kind === 'anthropic' ? 'anthropic-ratelimit-requests-remaining' : 'x-ratelimit-remaining-requests')).toBeNull();
  });

  it('makes the SDK throw when the upstream stream is cut mid-answer', async () => {
    up().fake.reply({ text: ['Once', ' upon', ' a time'], cutAfter: THROUGH_SECOND_DELTA[kind] });
    const stream = h.openai.responses.stream({ model: up().model, input: question });
    const deltas: string[] = [];
    stream.on('response.output_text.delta', (event) => deltas.push(event.delta));
    const error = await stream.finalResponse().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(deltas.join('')).toBe('Once upon');
  });

  it('makes the SDK throw with the upstream message on an in-stream error', async () => {
    up().fake.reply({
      text: ['Once', ' upon', ' a time'],
      streamError: {
        after: THROUGH_SECOND_DELTA[kind],
        message: 'The server had an error while processing your request.',
        type: kind === 'anthropic' ? 'overloaded_error' : 'server_error',
      },
    });
    const error = await h.openai.responses
      .stream({ model: up().model, input: question })
      .finalResponse()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as Error).message).toContain('The server had an error while processing your request.');
  });

  it(passthrough ? 'passes unknown fields through, model mapped' : 'accepts unknown fields', async () => {
    up().fake.reply({ text: ['ok'] });
    const body = { model: up().model, input: question, x_custom_field: { nested: [1, 'two'] }, prompt_cache_key: 'conv-7', text: { verbosity: 'low' } };
    const response = await h.openai.responses.create(body as OpenAI.Responses.ResponseCreateParamsNonStreaming);
    expect(response.output_text).toBe('ok');
    const received = up().fake.last().body;
    expect(received.model).toBe(up().upstreamModel);
    // The prompt cache key names the caller's own cache (security review 14).
    if (passthrough) expect(received).toEqual({ ...body, model: up().upstreamModel, prompt_cache_key: scopedCacheKey('conv-7') });
    if (kind === 'chat') expect(received).toMatchObject({ prompt_cache_key: scopedCacheKey('conv-7'), verbosity: 'low' });
  });
});
