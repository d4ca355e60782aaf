import OpenAI from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
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
  startHarness,
  toolExchange,
  type Harness,
  weatherAndTimeExchange,
} from './harness.js';

/** The OpenAI SDK's Chat Completions client against each upstream protocol. */
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());
beforeEach(() => h.reset());

const tools: ChatCompletionTool[] = [
  { type: 'function', function: { name: 'get_weather', description: 'Weather of a city', parameters: WEATHER_SCHEMA } },
  { type: 'function', function: { name: 'get_time', parameters: TIME_SCHEMA } },
];
const question: ChatCompletionMessageParam[] = [
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: 'Weather and time in Paris?' },
];

describe.each(UPSTREAMS)('chat client → %s upstream', (kind) => {
  const up = () => h.upstreams[kind];
  const passthrough = NATIVE[kind] === 'chat';

  it('answers JSON, with the usage converted and the request mapped', async () => {
    up().fake.reply({ text: ['Hello', ' world'], usage: USAGE });
    const completion = await h.openai.chat.completions.create({
      model: up().model,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Say hello' },
      ],
      max_completion_tokens: 100,
      temperature: 0.5,
    });

    expect(completion.object).toBe('chat.completion');
    expect(completion.choices[0]!.message).toMatchObject({ role: 'assistant', content: 'Hello world' });
    expect(completion.choices[0]!.finish_reason).toBe('stop');
    expect(completion.model).toBe(passthrough ? 'gpt-4.1-2025-04-14' : up().model);
    expect(completion.usage).toEqual(expectedUsage(kind, 'chat', USAGE));

    const received = up().fake.last();
    expect(received.path).toBe(up().path);
    expect(received.body.model).toBe(up().upstreamModel);
    expect(received.body.stream ?? false).toBe(false);
    expect(promptOf(kind, received.body)).toEqual({ system: 'Be brief.', user: ['Say hello'] });
    const maxTokensField = { chat: 'max_completion_tokens', responses: 'max_output_tokens', anthropic: 'max_tokens' }[kind];
    expect(received.body[maxTokensField]).toBe(100);
    // GPT-5, the Responses upstream's model, refuses temperature: a hint, dropped (x-infergate-dropped-params).
    expect(received.body.temperature).toBe(kind === 'responses' ? undefined : 0.5);
    expectUpstreamCredentials(kind, received.headers);
    await expect.poll(() => h.usage.length).toBe(1);
    expect(h.usage[0]).toMatchObject({
      model: up().model,
      upstreamModel: up().upstreamModel,
      status: 'ok',
      usage: { input: USAGE.input, output: USAGE.output },
    });
  });

  it('streams through the SDK helper, with usage at the end', async () => {
    up().fake.reply({ text: ['Hel', 'lo ', 'wörld'], usage: USAGE });
    const stream = h.openai.chat.completions.stream({ model: up().model, messages: question, stream_options: { include_usage: true } });
    const deltas: string[] = [];
    stream.on('content', (delta) => deltas.push(delta));
    const final = await stream.finalChatCompletion();

    expect(deltas.join('')).toBe('Hello wörld');
    expect(deltas.length).toBeGreaterThanOrEqual(3);
    expect(final.choices[0]!.message.content).toBe('Hello wörld');
    expect(final.choices[0]!.finish_reason).toBe('stop');
    expect(final.usage).toEqual(expectedUsage(kind, 'chat', USAGE));

    const received = up().fake.last();
    expect(received.body.stream).toBe(true);
    if (kind === 'chat') expect(received.body.stream_options).toEqual({ include_usage: true });
    expect(promptOf(kind, received.body)).toEqual({ system: 'Be brief.', user: ['Weather and time in Paris?'] });
  });

  it('runs a two-turn tool loop with two parallel calls streamed in fragments', async () => {
    const calls = parallelCalls(kind);
    up().fake.reply({ toolCalls: calls, usage: USAGE });
    const first = await h.openai.chat.completions.stream({ model: up().model, messages: question, tools, parallel_tool_calls: true }).finalChatCompletion();

    const choice = first.choices[0]!;
    expect(choice.finish_reason).toBe('tool_calls');
    const toolCalls = choice.message.tool_calls!.map((call) => (call.type === 'function' ? call : undefined)!);
    expect(toolCalls.map((call) => [call.id, call.function.name, JSON.parse(call.function.arguments)])).toEqual([
      [calls[0]!.id, 'get_weather', { city: 'Paris' }],
      [calls[1]!.id, 'get_time', { tz: 'Europe/Paris' }],
    ]);
    const turn1 = up().fake.last().body;
    expect(toolExchange(kind, turn1).calls).toEqual([]);
    const sentTools = kind === 'chat' ? turn1.tools.map((t: any) => t.function.name) : turn1.tools.map((t: any) => t.name);
    expect(sentTools).toEqual(['get_weather', 'get_time']);

    up().fake.reply({ text: ['It is 18°C at 14:05.'] });
    const second = await h.openai.chat.completions.create({
      model: up().model,
      tools,
      messages: [
        ...question,
        {
          role: 'assistant',
          content: null,
          tool_calls: toolCalls.map((call) => ({
            id: call.id,
            type: 'function' as const,
            function: { name: call.function.name, arguments: call.function.arguments },
          })),
        },
        { role: 'tool', tool_call_id: toolCalls[0]!.id, content: '18°C' },
        { role: 'tool', tool_call_id: toolCalls[1]!.id, content: '14:05' },
      ],
    });
    expect(second.choices[0]!.message.content).toBe('It is 18°C at 14:05.');

    // The upstream validated the history (ids matched, results right after the calls).
    expect(toolExchange(kind, up().fake.last().body)).toEqual(weatherAndTimeExchange(calls[0]!.id, calls[1]!.id));
  });

  it('passes an upstream 400 on with its status, message and the OpenAI error shape', async () => {
    up().fake.reply({
      error: { status: 400, message: "Invalid 'messages[1].content': string too long.", type: 'invalid_request_error', code: 'string_above_max_length' },
    });
    const error = await h.openai.chat.completions.create({ model: up().model, messages: question }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    const apiError = error as InstanceType<typeof OpenAI.BadRequestError>;
    expect(apiError.status).toBe(400);
    expect(apiError.message).toContain("Invalid 'messages[1].content': string too long.");
    expect(apiError.type).toBe('invalid_request_error');
    expect(apiError.error).toMatchObject({ message: "Invalid 'messages[1].content': string too long.", type: 'invalid_request_error' });
  });

  it('passes an upstream 429 on a stream with its retry headers, not the operator’s rate-limit headers', async () => {
    up().fake.reply({ error: rateLimited(kind) });
    const error = await h.openai.chat.completions
      .stream({ model: up().model, messages: question })
      .finalChatCompletion()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    const apiError = error as InstanceType<typeof OpenAI.RateLimitError>;
    expect(apiError.message).toContain('Rate limit reached for requests');
    expect(apiError.headers?.get('retry-after')).toBe('7');
    if (kind !== 'anthropic') expect(apiError.headers?.get('retry-after-ms')).toBe('7000');
    expect(apiError.headers?.get('anthropic-ratelimit-requests-remaining')).toBeNull();
    expect(apiError.headers?.get('x-ratelimit-remaining-requests')).toBeNull();
  });

  it('makes the SDK throw when the upstream stream is cut mid-answer', async () => {
    up().fake.reply({ text: ['Once', ' upon', ' a time'], cutAfter: THROUGH_SECOND_DELTA[kind] });
    const stream = h.openai.chat.completions.stream({ model: up().model, messages: question });
    const deltas: string[] = [];
    stream.on('content', (delta) => deltas.push(delta));
    const error = await stream.finalChatCompletion().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(deltas.join('')).toBe('Once upon');
    await expect.poll(() => h.usage.length).toBe(1);
    expect(h.usage[0]!.status).toBe('error');
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
    const stream = h.openai.chat.completions.stream({ model: up().model, messages: question });
    const error = await stream.finalChatCompletion().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as Error).message).toContain('The server had an error while processing your request.');
  });

  it(passthrough ? 'passes unknown fields through, model mapped' : 'accepts unknown fields', async () => {
    up().fake.reply({ text: ['ok'] });
    const body = { model: up().model, messages: question, x_custom_field: { nested: [1, 'two'] }, logit_bias: { '50256': -100 } };
    const completion = await h.openai.chat.completions.create(body as OpenAI.ChatCompletionCreateParamsNonStreaming);
    expect(completion.choices[0]!.message.content).toBe('ok');
    const received = up().fake.last().body;
    expect(received.model).toBe(up().upstreamModel);
    if (passthrough) expect(received).toEqual({ ...body, model: up().upstreamModel });
  });
});
