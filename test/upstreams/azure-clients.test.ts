import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AZURE_DEPLOYMENTS } from '../fakes/fake-azure.js';
import {
  API_VERSION,
  AZURE_BAD_FIELD,
  AZURE_MODELS,
  AZURE_RATE_LIMITED,
  AZURE_STYLES,
  type AzureHarness,
  type AzureStyle,
  azurePath,
  startAzureHarness,
  throughSecondDelta,
  upstreamProtocol,
} from './azure-harness.js';
import { type ClientProtocol, expectedUsage, TIME_SCHEMA, toolExchange, USAGE, WEATHER_SCHEMA, weatherAndTimeExchange } from './harness.js';

type Json = Record<string, any>;

/**
 * The `openai` (Chat and Responses helpers) and `@anthropic-ai/sdk` clients × Azure OpenAI's
 * deployment URLs (dated `api-version`: Chat Completions only, Responses and Messages clients
 * translated) and its v1 API (Chat and Responses passed through, Messages translated): JSON,
 * the stream helper, a two-turn parallel tool loop, usage, Azure's 429 with its retry headers, a
 * 400 naming the field, and a stream cut mid-answer.
 */
let h: AzureHarness;
beforeAll(async () => {
  h = await startAzureHarness();
});
afterAll(() => h.close());
beforeEach(() => {
  h.fake.reset();
  h.usage.length = 0;
});

interface ClientDriver {
  ask(model: string): Promise<{ text: string; usage: unknown }>;
  stream(model: string, onText: (delta: string) => void): Promise<{ text: string; usage: unknown }>;
  /** First turn through the stream helper; `answer` sends the results as the second turn. */
  toolTurn(model: string): Promise<{ calls: { id: string; name: string; input: unknown }[]; answer: (results: string[]) => Promise<string> }>;
  errorClass: typeof OpenAI.APIError | typeof Anthropic.APIError;
}

const question = 'Weather and time in Paris?';
const chatTools: OpenAI.ChatCompletionTool[] = [
  { type: 'function', function: { name: 'get_weather', description: 'Weather of a city', parameters: WEATHER_SCHEMA } },
  { type: 'function', function: { name: 'get_time', parameters: TIME_SCHEMA } },
];
const responsesTools: OpenAI.Responses.FunctionTool[] = [
  { type: 'function', name: 'get_weather', description: 'Weather of a city', parameters: WEATHER_SCHEMA, strict: false },
  { type: 'function', name: 'get_time', parameters: TIME_SCHEMA, strict: false },
];
const messagesTools: Anthropic.Tool[] = [
  { name: 'get_weather', description: 'Weather of a city', input_schema: WEATHER_SCHEMA as Anthropic.Tool.InputSchema },
  { name: 'get_time', input_schema: TIME_SCHEMA as Anthropic.Tool.InputSchema },
];
const textOf = (content: Anthropic.ContentBlock[]) => content.map((block) => (block.type === 'text' ? block.text : '')).join('');

const CLIENTS: Record<ClientProtocol, ClientDriver> = {
  chat: {
    errorClass: OpenAI.APIError,
    async ask(model) {
      const answer = await h.openai.chat.completions.create({ model, messages: [{ role: 'user', content: 'Hi' }] });
      return { text: answer.choices[0]!.message.content ?? '', usage: answer.usage };
    },
    async stream(model, onText) {
      const run = h.openai.chat.completions.stream({ model, messages: [{ role: 'user', content: 'A story' }], stream_options: { include_usage: true } });
      run.on('content', onText);
      const final = await run.finalChatCompletion();
      return { text: final.choices[0]!.message.content ?? '', usage: final.usage };
    },
    async toolTurn(model) {
      const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: question }];
      const first = await h.openai.chat.completions.stream({ model, messages, tools: chatTools }).finalChatCompletion();
      const message = first.choices[0]!.message;
      const calls = (message.tool_calls ?? []).flatMap((call) => (call.type === 'function' ? [call] : []));
      return {
        calls: calls.map((call) => ({ id: call.id, name: call.function.name, input: JSON.parse(call.function.arguments) })),
        async answer(results) {
          const second = await h.openai.chat.completions.create({
            model,
            tools: chatTools,
            messages: [
              ...messages,
              { role: 'assistant', content: message.content, tool_calls: message.tool_calls! },
              ...calls.map((call, i): OpenAI.ChatCompletionMessageParam => ({ role: 'tool', tool_call_id: call.id, content: results[i]! })),
            ],
          });
          return second.choices[0]!.message.content ?? '';
        },
      };
    },
  },
  responses: {
    errorClass: OpenAI.APIError,
    async ask(model) {
      const answer = await h.openai.responses.create({ model, input: 'Hi', store: false });
      return { text: answer.output_text, usage: answer.usage };
    },
    async stream(model, onText) {
      const run = h.openai.responses.stream({ model, input: 'A story', store: false });
      run.on('response.output_text.delta', (event) => onText(event.delta));
      const final = await run.finalResponse();
      return { text: final.output_text, usage: final.usage };
    },
    async toolTurn(model) {
      const input: OpenAI.Responses.ResponseInputItem[] = [{ role: 'user', content: question }];
      const first = await h.openai.responses.stream({ model, input, tools: responsesTools, store: false }).finalResponse();
      const output: OpenAI.Responses.ResponseOutputItem[] = first.output;
      const calls = output.filter((item): item is OpenAI.Responses.ResponseFunctionToolCall => item.type === 'function_call');
      return {
        calls: calls.map((call) => ({ id: call.call_id, name: call.name, input: JSON.parse(call.arguments) })),
        async answer(results) {
          const second = await h.openai.responses.create({
            model,
            tools: responsesTools,
            store: false,
            input: [
              ...input,
              ...(first.output as OpenAI.Responses.ResponseInputItem[]),
              ...calls.map((call, i): OpenAI.Responses.ResponseInputItem => ({ type: 'function_call_output', call_id: call.call_id, output: results[i]! })),
            ],
          });
          return second.output_text;
        },
      };
    },
  },
  messages: {
    errorClass: Anthropic.APIError,
    async ask(model) {
      const answer = await h.anthropic.messages.create({ model, max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] });
      return { text: textOf(answer.content), usage: answer.usage };
    },
    async stream(model, onText) {
      const run = h.anthropic.messages.stream({ model, max_tokens: 256, messages: [{ role: 'user', content: 'A story' }] });
      run.on('text', onText);
      const final = await run.finalMessage();
      return { text: textOf(final.content), usage: final.usage };
    },
    async toolTurn(model) {
      const messages: Anthropic.MessageParam[] = [{ role: 'user', content: question }];
      const first = await h.anthropic.messages.stream({ model, max_tokens: 1024, messages, tools: messagesTools }).finalMessage();
      const uses = first.content.filter((block) => block.type === 'tool_use');
      return {
        calls: uses.map((block) => ({ id: block.id, name: block.name, input: block.input })),
        async answer(results) {
          const second = await h.anthropic.messages.create({
            model,
            max_tokens: 1024,
            tools: messagesTools,
            messages: [
              ...messages,
              { role: 'assistant', content: first.content },
              { role: 'user', content: uses.map((block, i) => ({ type: 'tool_result' as const, tool_use_id: block.id, content: results[i]! })) },
            ],
          });
          return textOf(second.content);
        },
      };
    },
  },
};

/** The error's message as the client reads it (the Anthropic SDK's own message is the raw body). */
function messageOf(error: unknown): string {
  if (error instanceof Anthropic.APIError) return String((error.error as Json | undefined)?.error?.message);
  return (error as Error).message;
}

/** What every Azure request must carry: the version where it belongs, the resource's key, never the client's. */
function expectAzureRequest(style: AzureStyle, protocol: 'chat' | 'responses'): Json {
  const received = h.fake.last();
  expect(received.path).toBe(azurePath(style, protocol));
  expect(new URL(received.url, 'http://x').searchParams.get('api-version')).toBe(style === 'dated' ? API_VERSION : null);
  expect(received.headers['api-key']).toBe('az-key');
  expect(received.headers.authorization).toBeUndefined();
  expect(JSON.stringify(received.headers)).not.toContain('sk-test');
  // upstreamModel is the deployment; on v1 it is the body's model.
  expect(received.body.model).toBe(AZURE_DEPLOYMENTS.chat);
  return received.body;
}

const cells = (['chat', 'responses', 'messages'] as const).flatMap((client) => AZURE_STYLES.map((style) => [client, style] as const));

describe.each(cells)('%s client × Azure %s', (client, style) => {
  const driver = CLIENTS[client];
  const model = AZURE_MODELS[style].chat;
  const protocol = upstreamProtocol(style, client);
  const usage = expectedUsage(protocol, client, USAGE);

  it('JSON: the answer and its usage; the request in Azure’s shape', async () => {
    h.fake.reply({ text: ['Hello', ' from Azure'], usage: USAGE });
    const answer = await driver.ask(model);
    expect(answer.text).toBe('Hello from Azure');
    expect(answer.usage).toMatchObject(usage);
    const body = expectAzureRequest(style, protocol);
    expect(body.stream).not.toBe(true);
    await expect.poll(() => h.usage.length).toBe(1);
    expect(h.usage[0]).toMatchObject({
      model,
      provider: style === 'dated' ? 'az' : 'azv1',
      upstreamModel: AZURE_DEPLOYMENTS.chat,
      status: 'ok',
      usage: { input: USAGE.input, cachedRead: USAGE.cachedRead, output: USAGE.output },
    });
  });

  it('the stream helper: every delta, the final text and the usage (Azure’s prompt-filter chunk first)', async () => {
    h.fake.reply({ text: ['Once', ' upon', ' a time'], usage: USAGE });
    const deltas: string[] = [];
    const streamed = await driver.stream(model, (delta) => deltas.push(delta));
    expect(deltas.join('')).toBe('Once upon a time');
    expect(streamed.text).toBe('Once upon a time');
    expect(streamed.usage).toMatchObject(usage);
    expect(expectAzureRequest(style, protocol).stream).toBe(true);
  });

  it('a two-turn parallel tool loop: both calls, both results reaching Azure, the answer', async () => {
    const [weatherId, timeId] = ['call_AzWeather', 'call_AzTime'];
    h.fake.reply(
      {
        toolCalls: [
          { id: weatherId, name: 'get_weather', args: ['{"city":', ' "Paris"}'] },
          { id: timeId, name: 'get_time', args: ['{"tz":"Europe/', 'Paris"}'] },
        ],
        usage: USAGE,
      },
      { text: ['It is 18°C at 14:05.'] },
    );
    const turn = await driver.toolTurn(model);
    expect(turn.calls.map(({ name, input }) => ({ name, input }))).toEqual([
      { name: 'get_weather', input: { city: 'Paris' } },
      { name: 'get_time', input: { tz: 'Europe/Paris' } },
    ]);
    expect(await turn.answer(['18°C', '14:05'])).toBe('It is 18°C at 14:05.');

    const [first, second] = h.fake.accepted();
    expect(first!.body.stream).toBe(true);
    expect(first!.path).toBe(azurePath(style, protocol));
    // Azure's own ids come back to it (the Anthropic client carries them as tool_use ids).
    expect(toolExchange(protocol, second!.body)).toEqual(weatherAndTimeExchange(weatherId, timeId));
  });

  it('Azure’s 429 is the SDK’s 429 with retry-after and retry-after-ms', async () => {
    h.fake.reply({ error: AZURE_RATE_LIMITED });
    const error = await driver.stream(model, () => {}).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(driver.errorClass);
    const apiError = error as InstanceType<typeof OpenAI.APIError>;
    expect(apiError.status).toBe(429);
    expect(apiError.headers?.get('retry-after')).toBe('7');
    expect(apiError.headers?.get('retry-after-ms')).toBe('7000');
    expect(messageOf(apiError)).toContain('exceeded token rate limit');
  });

  it('a 400 naming the field is the SDK’s 400 naming it', async () => {
    h.fake.reply({ error: AZURE_BAD_FIELD });
    const error = await driver.ask(model).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(driver.errorClass);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(400);
    expect(messageOf(error)).toContain("'temperature'");
    if (error instanceof OpenAI.APIError) expect(error.param).toBe('temperature');
  });

  it('a stream cut mid-answer makes the stream helper throw after the text so far', async () => {
    h.fake.reply({ text: ['Once', ' upon', ' a time'], cutAfter: throughSecondDelta(protocol) });
    const deltas: string[] = [];
    const error = await driver.stream(model, (delta) => deltas.push(delta)).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(driver.errorClass);
    expect(deltas.join('')).toBe('Once upon');
  });
});
