import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createGateway, type Gateway } from '../../src/gateway.js';
import { createBedrockProvider } from '../../src/providers/bedrock/bedrock-provider.js';
import { BEDROCK_CREDENTIALS, BEDROCK_REGION, CLAUDE, type FakeBedrock, NOVA, startFakeBedrock, THROTTLED } from '../fakes/fake-bedrock.js';
import type { UpstreamErrorSpec } from '../fakes/fake-server.js';
import { serve, type Served } from '../helpers/serve.js';
import {
  type ClientProtocol,
  expectedUsage,
  THROUGH_SECOND_DELTA,
  TIME_SCHEMA,
  toolExchangeByName,
  USAGE,
  WEATHER_SCHEMA,
  weatherAndTimeByName,
} from './harness.js';

type Json = Record<string, any>;

/**
 * The `openai` (Chat and Responses helpers) and `@anthropic-ai/sdk` clients × Amazon Bedrock:
 * Nova on the Converse API (every client translated through the IR) and Claude on `invoke`
 * (Messages clients passed through, the others translated to Messages). Each cell: JSON, the
 * SDK's stream helper, a two-turn parallel tool loop, usage with cache counters, a throttle (429
 * with a retry delay), a validation error (400 naming the field), a stream cut and an exception
 * event mid-stream. The fake checks every request's SigV4 signature.
 */
let fake: FakeBedrock;
let gateway: Gateway;
let served: Served;
let openai: OpenAI;
let anthropic: Anthropic;

beforeAll(async () => {
  fake = await startFakeBedrock();
  gateway = createGateway({
    keys: [{ key: 'sk-test' }],
    providers: { aws: createBedrockProvider({ region: BEDROCK_REGION, ...BEDROCK_CREDENTIALS, baseURL: fake.url }) },
    models: [
      { id: 'nova', provider: 'aws', upstreamModel: NOVA },
      { id: 'claude-bedrock', provider: 'aws', upstreamModel: CLAUDE },
    ],
    logger: false,
  });
  served = await serve(gateway);
  openai = new OpenAI({ baseURL: `${served.url}/v1`, apiKey: 'sk-test', maxRetries: 0 });
  anthropic = new Anthropic({ baseURL: served.url, apiKey: 'sk-test', maxRetries: 0 });
});
afterAll(async () => {
  await served.close();
  await Promise.all(Object.values(gateway.options.providers).map((provider) => provider.close?.()));
  await fake.close();
});
beforeEach(() => fake.reset());

type Family = 'nova' | 'claude';

interface BedrockModel {
  model: string;
  /** The path the upstream received for a JSON and for a streamed request. */
  path: (stream: boolean) => string;
  throughSecondDelta: number;
}

const FAMILIES: Record<Family, BedrockModel> = {
  nova: {
    model: 'nova',
    path: (stream) => `/model/${encodeURIComponent(NOVA)}/${stream ? 'converse-stream' : 'converse'}`,
    // messageStart, then two text deltas.
    throughSecondDelta: 3,
  },
  claude: {
    model: 'claude-bedrock',
    path: (stream) => `/model/${encodeURIComponent(CLAUDE)}/${stream ? 'invoke-with-response-stream' : 'invoke'}`,
    throughSecondDelta: THROUGH_SECOND_DELTA.anthropic,
  },
};

/** Bedrock counts cache reads and writes apart from the input, as Anthropic does; it reports no thinking counter. */
const usageFor = (client: ClientProtocol) => expectedUsage('anthropic', client, USAGE);

/** The tool calls and results a Converse body carries, by tool name. */
function converseExchangeByName(body: Json): { calls: unknown[]; results: unknown[] } {
  const blocks: Json[] = body.messages.flatMap((message: Json) => message.content);
  const names = new Map<string, string>();
  const calls = blocks
    .filter((block) => block.toolUse)
    .map(({ toolUse }) => {
      names.set(toolUse.toolUseId, toolUse.name);
      return { name: toolUse.name, input: toolUse.input };
    });
  const results = blocks
    .filter((block) => block.toolResult)
    .map(({ toolResult }) => ({ name: names.get(toolResult.toolUseId), output: toolResult.content.map((part: Json) => part.text ?? '').join('') }));
  return { calls, results };
}

// ---- each client through the same steps (as in vertex-clients.test.ts) ------------------------

interface ToolCallSeen {
  id: string;
  name: string;
  input: unknown;
}

interface ClientDriver {
  stream(model: string, onText: (delta: string) => void): Promise<{ text: string; usage: unknown }>;
  ask(model: string, extra?: Json): Promise<{ text: string; usage: unknown }>;
  toolTurn(model: string): Promise<{ calls: ToolCallSeen[]; usage: unknown; answer: (results: string[]) => Promise<string> }>;
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
    async stream(model, onText) {
      const run = openai.chat.completions.stream({ model, messages: [{ role: 'user', content: 'A story' }], stream_options: { include_usage: true } });
      run.on('content', onText);
      const final = await run.finalChatCompletion();
      return { text: final.choices[0]!.message.content ?? '', usage: final.usage };
    },
    async ask(model, extra = {}) {
      const answer = await openai.chat.completions.create({
        model,
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Hi' },
        ],
        ...extra,
      });
      return { text: answer.choices[0]!.message.content ?? '', usage: answer.usage };
    },
    async toolTurn(model) {
      const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: question }];
      const first = await openai.chat.completions.stream({ model, messages, tools: chatTools, stream_options: { include_usage: true } }).finalChatCompletion();
      const message = first.choices[0]!.message;
      const calls = (message.tool_calls ?? []).map((call) => (call.type === 'function' ? call : undefined)!);
      return {
        calls: calls.map((call) => ({ id: call.id, name: call.function.name, input: JSON.parse(call.function.arguments) })),
        usage: first.usage,
        async answer(results) {
          const second = await openai.chat.completions.create({
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
    async stream(model, onText) {
      const run = openai.responses.stream({ model, input: 'A story', store: false });
      run.on('response.output_text.delta', (event) => onText(event.delta));
      const final = await run.finalResponse();
      return { text: final.output_text, usage: final.usage };
    },
    async ask(model, extra = {}) {
      const answer = await openai.responses.create({ model, instructions: 'Be brief.', input: 'Hi', store: false, ...extra });
      return { text: answer.output_text, usage: answer.usage };
    },
    async toolTurn(model) {
      const input: OpenAI.Responses.ResponseInputItem[] = [{ role: 'user', content: question }];
      const first = await openai.responses.stream({ model, input, tools: responsesTools, store: false }).finalResponse();
      const output: OpenAI.Responses.ResponseOutputItem[] = first.output;
      const calls = output.filter((item): item is OpenAI.Responses.ResponseFunctionToolCall => item.type === 'function_call');
      return {
        calls: calls.map((call) => ({ id: call.call_id, name: call.name, input: JSON.parse(call.arguments) })),
        usage: first.usage,
        async answer(results) {
          const second = await openai.responses.create({
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
    async stream(model, onText) {
      const run = anthropic.messages.stream({ model, max_tokens: 256, messages: [{ role: 'user', content: 'A story' }] });
      run.on('text', onText);
      const final = await run.finalMessage();
      return { text: textOf(final.content), usage: final.usage };
    },
    async ask(model, extra = {}) {
      const answer = await anthropic.messages.create({ model, max_tokens: 64, system: 'Be brief.', messages: [{ role: 'user', content: 'Hi' }], ...extra });
      return { text: textOf(answer.content), usage: answer.usage };
    },
    async toolTurn(model) {
      const messages: Anthropic.MessageParam[] = [{ role: 'user', content: question }];
      const first = await anthropic.messages.stream({ model, max_tokens: 1024, messages, tools: messagesTools }).finalMessage();
      const uses = first.content.filter((block) => block.type === 'tool_use');
      return {
        calls: uses.map((block) => ({ id: block.id, name: block.name, input: block.input })),
        usage: first.usage,
        async answer(results) {
          const second = await anthropic.messages.create({
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

const cells = (['chat', 'responses', 'messages'] as const).flatMap((client) => (['nova', 'claude'] as const).map((family) => [client, family] as const));

describe('openai and @anthropic-ai/sdk clients × Amazon Bedrock', () => {
  it.each(cells)('%s → %s: a JSON answer with its usage, the request signed and sent where it belongs', async (client, family) => {
    const bedrock = FAMILIES[family];
    fake.reply({ text: ['Hello', ' there'], usage: USAGE });
    const answer = await CLIENTS[client].ask(bedrock.model);
    expect(answer.text).toBe('Hello there');
    expect(answer.usage).toMatchObject(usageFor(client));

    const received = fake.last();
    expect(received.path).toBe(bedrock.path(false));
    expect(received.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIAFAKEBEDROCK00001\/\d{8}\/us-east-1\/bedrock\/aws4_request/);
    expect(JSON.stringify(received.headers)).not.toContain('sk-test');
    if (family === 'nova') {
      expect(received.body.system).toEqual([{ text: 'Be brief.' }]);
      expect(received.body.messages).toEqual([{ role: 'user', content: [{ text: 'Hi' }] }]);
      // Converse gets no made-up max tokens: only the client's (the Messages client's 64).
      expect(received.body.inferenceConfig?.maxTokens).toBe(client === 'messages' ? 64 : undefined);
    } else {
      expect(received.body).toMatchObject({ anthropic_version: 'bedrock-2023-05-31', messages: [{ role: 'user' }] });
      expect(received.body).not.toHaveProperty('model');
      expect(JSON.stringify(received.body.system)).toContain('Be brief.');
    }
  });

  it.each(cells)('%s → %s: the SDK’s stream helper gets every delta and the usage', async (client, family) => {
    const bedrock = FAMILIES[family];
    fake.reply({ text: ['Once', ' upon', ' a time'], usage: USAGE });
    const deltas: string[] = [];
    const streamed = await CLIENTS[client].stream(bedrock.model, (delta) => deltas.push(delta));
    expect(streamed.text).toBe('Once upon a time');
    expect(deltas.join('')).toBe('Once upon a time');
    expect(streamed.usage).toMatchObject(usageFor(client));
    expect(fake.last().path).toBe(bedrock.path(true));
  });

  it.each(cells)('%s → %s: a two-turn parallel tool loop, the results answering the calls by id', async (client, family) => {
    const bedrock = FAMILIES[family];
    fake.reply(
      {
        toolCalls: [
          { name: 'get_weather', args: ['{"city":', ' "Paris"}'] },
          { name: 'get_time', args: ['{"tz":"Europe/Paris"}'] },
        ],
        usage: USAGE,
      },
      { text: ['It is 18°C at 14:05.'] },
    );
    const turn = await CLIENTS[client].toolTurn(bedrock.model);
    expect(turn.calls.map(({ name, input }) => ({ name, input }))).toEqual([
      { name: 'get_weather', input: { city: 'Paris' } },
      { name: 'get_time', input: { tz: 'Europe/Paris' } },
    ]);
    expect(turn.usage).toMatchObject(usageFor(client));
    expect(await turn.answer(['18°C', '14:05'])).toBe('It is 18°C at 14:05.');

    // The fake refuses results that answer no call of the previous turn: both were accepted.
    const [first, second] = fake.accepted();
    expect(first!.path).toBe(bedrock.path(true));
    expect(second!.path).toBe(bedrock.path(false));
    const exchange = family === 'nova' ? converseExchangeByName(second!.body) : toolExchangeByName('anthropic', second!.body);
    expect(exchange).toEqual(weatherAndTimeByName());
    if (family === 'nova') {
      // The ids Bedrock gave are the ids the client saw and answered.
      const ids = (second!.body.messages as Json[])
        .flatMap((m) => m.content)
        .filter((b: Json) => b.toolResult)
        .map((b: Json) => b.toolResult.toolUseId);
      expect(ids).toEqual(turn.calls.map((call) => call.id));
      expect(ids[0]).toMatch(/^tooluse_/);
    }
  });

  it.each(cells)('%s → %s: a throttle is the SDK’s 429 with a retry delay', async (client, family) => {
    fake.reply({ error: THROTTLED });
    const error = await CLIENTS[client].stream(FAMILIES[family].model, () => {}).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(CLIENTS[client].errorClass);
    const apiError = error as InstanceType<typeof OpenAI.APIError>;
    expect(apiError.status).toBe(429);
    expect(apiError.headers?.get('retry-after')).toBe('1');
    expect(messageOf(apiError)).toContain('Too many requests');
  });

  it.each(cells)('%s → %s: a validation error is the SDK’s 400 naming the field', async (client, family) => {
    const badField: UpstreamErrorSpec = {
      status: 400,
      type: 'ValidationException',
      message:
        "1 validation error detected: Value '999999' at 'inferenceConfig.maxTokens' failed to satisfy constraint: Member must have value less than or equal to 10000",
    };
    fake.reply({ error: badField });
    const error = await CLIENTS[client].ask(FAMILIES[family].model).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(CLIENTS[client].errorClass);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(400);
    expect(messageOf(error)).toContain("at 'inferenceConfig.maxTokens'");
    if (client !== 'messages') expect((error as InstanceType<typeof OpenAI.APIError>).param).toBe('max_tokens');
  });

  it.each(cells)('%s → %s: a stream cut mid-answer makes the stream helper throw after the text so far', async (client, family) => {
    const bedrock = FAMILIES[family];
    fake.reply({ text: ['Once', ' upon', ' a time'], cutAfter: bedrock.throughSecondDelta });
    const deltas: string[] = [];
    const error = await CLIENTS[client].stream(bedrock.model, (delta) => deltas.push(delta)).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(CLIENTS[client].errorClass);
    expect(deltas.join('')).toBe('Once upon');
  });

  it.each(cells)('%s → %s: an exception event mid-stream ends the stream with an error after the text so far', async (client, family) => {
    const bedrock = FAMILIES[family];
    fake.reply({
      text: ['Once', ' upon', ' a time'],
      streamError: { after: bedrock.throughSecondDelta, type: 'modelStreamErrorException', message: 'The model stream failed: upstream model error.' },
    });
    const deltas: string[] = [];
    const error = await CLIENTS[client].stream(bedrock.model, (delta) => deltas.push(delta)).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(CLIENTS[client].errorClass);
    expect(deltas.join('')).toBe('Once upon');
    expect(String(messageOf(error)) + String((error as Error).message)).toContain('model stream failed');
  });
});

describe('Bedrock Converse strictness reaches the client', () => {
  it('a temperature Converse refuses is a 400 naming temperature, from the fake’s own validation', async () => {
    const error = await openai.chat.completions
      .create({ model: 'nova', messages: [{ role: 'user', content: 'Hi' }], temperature: 1.5 })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(400);
    expect((error as InstanceType<typeof OpenAI.APIError>).param).toBe('temperature');
    expect(fake.requests.at(-1)!.rejected?.message).toContain("'inferenceConfig.temperature'");
  });

  it('a JSON schema response format is Converse’s structured output, the schema as JSON text', async () => {
    fake.reply({ text: ['{"n":4}'] });
    const schema = { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'], additionalProperties: false };
    const answer = await openai.chat.completions.create({
      model: 'nova',
      messages: [{ role: 'user', content: '2 + 2?' }],
      response_format: { type: 'json_schema', json_schema: { name: 'sum', schema, strict: true } },
    });
    expect(JSON.parse(answer.choices[0]!.message.content!)).toEqual({ n: 4 });
    const textFormat = fake.last().body.outputConfig.textFormat;
    expect(textFormat.type).toBe('json_schema');
    expect(textFormat.structure.jsonSchema.name).toBe('sum');
    expect(JSON.parse(textFormat.structure.jsonSchema.schema)).toEqual(schema);
  });

  it('a tool result that answers no call is refused by the gateway before Bedrock, naming the message', async () => {
    const error = await openai.chat.completions
      .create({
        model: 'nova',
        messages: [
          { role: 'user', content: 'Hi' },
          { role: 'tool', tool_call_id: 'tooluse_nothing', content: '18°C' },
        ],
      })
      .catch((caught: unknown) => caught);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(400);
    expect((error as InstanceType<typeof OpenAI.APIError>).param).toMatch(/^messages\[1\]/);
    expect(fake.requests).toHaveLength(0);
  });
});
