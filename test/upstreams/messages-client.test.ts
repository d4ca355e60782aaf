import Anthropic from '@anthropic-ai/sdk';
import type { MessageParam, Tool } from '@anthropic-ai/sdk/resources/messages';
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

/** The Anthropic SDK's Messages client against each upstream protocol. */
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());
beforeEach(() => h.reset());

const tools: Tool[] = [
  { name: 'get_weather', description: 'Weather of a city', input_schema: WEATHER_SCHEMA as Tool['input_schema'] },
  { name: 'get_time', input_schema: TIME_SCHEMA as Tool['input_schema'] },
];
const system = 'Be brief.';
const question: MessageParam[] = [{ role: 'user', content: 'Weather and time in Paris?' }];

describe.each(UPSTREAMS)('messages client → %s upstream', (kind) => {
  const up = () => h.upstreams[kind];
  const passthrough = NATIVE[kind] === 'messages';

  it('answers JSON, with the usage converted and the request mapped', async () => {
    up().fake.reply({ text: ['Hello', ' world'], usage: USAGE });
    // `temperature` left this SDK version's types; the API (and older clients) still take it.
    const params = { model: up().model, system, max_tokens: 100, temperature: 0.5, messages: [{ role: 'user', content: 'Say hello' }] };
    const message = await h.anthropic.messages.create(params as Anthropic.MessageCreateParamsNonStreaming);

    expect(message.type).toBe('message');
    expect(message.content).toEqual([expect.objectContaining({ type: 'text', text: 'Hello world' })]);
    expect(message.stop_reason).toBe('end_turn');
    expect(message.model).toBe(passthrough ? 'claude-sonnet-4-5' : up().model);
    expect(message.usage).toMatchObject(expectedUsage(kind, 'messages', USAGE));

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
    expect(h.usage[0]).toMatchObject({ model: up().model, status: 'ok', usage: { input: USAGE.input, output: USAGE.output } });
  });

  it('streams through the SDK helper, with usage at the end', async () => {
    up().fake.reply({ text: ['Hel', 'lo ', 'wörld'], usage: USAGE });
    const stream = h.anthropic.messages.stream({ model: up().model, system, max_tokens: 256, messages: question });
    const deltas: string[] = [];
    stream.on('text', (delta) => deltas.push(delta));
    const final = await stream.finalMessage();

    expect(deltas).toEqual(['Hel', 'lo ', 'wörld']);
    expect(final.content).toEqual([expect.objectContaining({ type: 'text', text: 'Hello wörld' })]);
    expect(final.stop_reason).toBe('end_turn');
    expect(final.usage).toMatchObject(expectedUsage(kind, 'messages', USAGE));

    const received = up().fake.last();
    expect(received.body.stream).toBe(true);
    if (kind === 'chat') expect(received.body.stream_options).toEqual({ include_usage: true });
    expect(promptOf(kind, received.body)).toEqual({ system: 'Be brief.', user: ['Weather and time in Paris?'] });
  });

  it('runs a two-turn tool loop with two parallel calls streamed in fragments', async () => {
    const calls = parallelCalls(kind);
    up().fake.reply({ toolCalls: calls, usage: USAGE });
    const first = await h.anthropic.messages.stream({ model: up().model, system, max_tokens: 256, messages: question, tools }).finalMessage();

    expect(first.stop_reason).toBe('tool_use');
    const toolUses = first.content.filter((block) => block.type === 'tool_use');
    expect(toolUses.map((block) => [block.id, block.name, block.input])).toEqual([
      [calls[0]!.id, 'get_weather', { city: 'Paris' }],
      [calls[1]!.id, 'get_time', { tz: 'Europe/Paris' }],
    ]);
    const turn1 = up().fake.last().body;
    const sentTools = kind === 'chat' ? turn1.tools.map((t: any) => t.function.name) : turn1.tools.map((t: any) => t.name);
    expect(sentTools).toEqual(['get_weather', 'get_time']);

    up().fake.reply({ text: ['It is 18°C at 14:05.'] });
    const second = await h.anthropic.messages.create({
      model: up().model,
      system,
      max_tokens: 256,
      tools,
      messages: [
        ...question,
        { role: 'assistant', content: first.content },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: toolUses[0]!.id, content: '18°C' },
            { type: 'tool_result', tool_use_id: toolUses[1]!.id, content: [{ type: 'text', text: '14:05' }] },
          ],
        },
      ],
    });
    expect(second.content).toEqual([expect.objectContaining({ type: 'text', text: 'It is 18°C at 14:05.' })]);

    expect(toolExchange(kind, up().fake.last().body)).toEqual(weatherAndTimeExchange(calls[0]!.id, calls[1]!.id));
  });

  it('carries thinking through a tool loop', async () => {
    const calls = parallelCalls(kind).slice(0, 1);
    up().fake.reply({ reasoning: ['The user wants ', 'the weather.'], text: ['Let me check.'], toolCalls: calls });
    const thinking = { type: 'enabled' as const, budget_tokens: 2048 };
    const first = await h.anthropic.messages.stream({ model: up().model, max_tokens: 4096, thinking, messages: question, tools }).finalMessage();
    if (kind !== 'chat') {
      const block = first.content.find((b) => b.type === 'thinking');
      expect(block?.type === 'thinking' && block.thinking).toBe('The user wants the weather.');
    }
    expect(first.content.filter((b) => b.type === 'text').map((b) => (b.type === 'text' ? b.text : ''))).toEqual(['Let me check.']);

    up().fake.reply({ text: ['18°C.'] });
    const second = await h.anthropic.messages.create({
      model: up().model,
      max_tokens: 4096,
      thinking,
      tools,
      messages: [
        ...question,
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: calls[0]!.id, content: '18°C' }] },
      ],
    });
    expect(second.content.at(-1)).toMatchObject({ type: 'text', text: '18°C.' });
    const received = up().fake.last().body;
    if (kind === 'anthropic') {
      expect(received.messages[1].content.map((block: any) => block.type)).toEqual(['thinking', 'text', 'tool_use']);
    }
    if (kind === 'responses') expect(received.input.find((item: any) => item.type === 'reasoning')?.encrypted_content).toMatch(/^gAAAAA/);
  });

  it('passes an upstream 400 on with its status, message and the Anthropic error shape', async () => {
    up().fake.reply({
      error: { status: 400, message: 'messages.0.content: string too long.', type: 'invalid_request_error', code: 'string_above_max_length' },
    });
    const error = await h.anthropic.messages.create({ model: up().model, max_tokens: 100, messages: question }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    const apiError = error as InstanceType<typeof Anthropic.BadRequestError>;
    expect(apiError.status).toBe(400);
    expect(apiError.message).toContain('messages.0.content: string too long.');
    expect(apiError.error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: 'messages.0.content: string too long.' } });
    expect(apiError.requestID).toMatch(/^req_/);
  });

  it('passes an upstream 429 on a stream with its retry headers, not the operator’s rate-limit headers', async () => {
    up().fake.reply({ error: rateLimited(kind) });
    const error = await h.anthropic.messages
      .stream({ model: up().model, max_tokens: 100, messages: question })
      .finalMessage()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.RateLimitError);
    const apiError = error as InstanceType<typeof Anthropic.RateLimitError>;
    expect(apiError.message).toContain('Rate limit reached for requests');
    expect(apiError.error).toMatchObject({ error: { type: 'rate_limit_error' } });
    expect(apiError.headers?.get('retry-after')).toBe('7');
    expect(apiError.headers?.get(kind === 'anthropic' ? 'anthropic-ratelimit-requests-remaining' : 'x-ratelimit-remaining-requests')).toBeNull();
  });

  it('makes the SDK throw when the upstream stream is cut mid-answer', async () => {
    up().fake.reply({ text: ['Once', ' upon', ' a time'], cutAfter: THROUGH_SECOND_DELTA[kind] });
    const stream = h.anthropic.messages.stream({ model: up().model, max_tokens: 100, messages: question });
    const deltas: string[] = [];
    stream.on('text', (delta) => deltas.push(delta));
    const error = await stream.finalMessage().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.APIError);
    expect(deltas.join('')).toBe('Once upon');
  });

  it('makes the SDK throw with the upstream message on an in-stream error', async () => {
    up().fake.reply({
      text: ['Once', ' upon', ' a time'],
      streamError: { after: THROUGH_SECOND_DELTA[kind], message: 'Overloaded', type: kind === 'anthropic' ? 'overloaded_error' : 'server_overloaded' },
    });
    const error = await h.anthropic.messages
      .stream({ model: up().model, max_tokens: 100, messages: question })
      .finalMessage()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.APIError);
    expect((error as Error).message).toContain('Overloaded');
    expect((error as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ type: 'error', error: { type: 'overloaded_error' } });
  });

  it(passthrough ? 'passes unknown fields and beta headers through, model mapped' : 'accepts unknown fields', async () => {
    up().fake.reply({ text: ['ok'] });
    const body = {
      model: up().model,
      max_tokens: 64,
      messages: question,
      x_custom_field: { nested: [1, 'two'] },
      metadata: { user_id: 'u-1' },
      ...(passthrough ? { top_k: 5 } : {}),
    };
    const message = await h.anthropic.messages.create(body as Anthropic.MessageCreateParamsNonStreaming, {
      headers: { 'anthropic-beta': 'fine-grained-tool-streaming-2025-05-14' },
    });
    expect(message.content).toEqual([expect.objectContaining({ type: 'text', text: 'ok' })]);
    const received = up().fake.last();
    expect(received.body.model).toBe(up().upstreamModel);
    if (passthrough) {
      expect(received.body).toEqual({ ...body, model: up().upstreamModel });
      expect(received.headers['anthropic-beta']).toBe('fine-grained-tool-streaming-2025-05-14');
    }
  });
});
