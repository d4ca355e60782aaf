import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CLAUDE, type FakeBedrock, NOVA, startFakeBedrock, THROTTLED } from '../fakes/fake-bedrock.js';
import type { UpstreamErrorSpec } from '../fakes/fake-server.js';
import { type BedrockGateway, converseExchangeByName, serveBedrockGateway } from './bedrock-harness.js';
import { type ClientDriver, clientDrivers, messageOf } from './client-drivers.js';
import { type ClientProtocol, expectedUsage, THROUGH_SECOND_DELTA, toolExchangeByName, USAGE, weatherAndTimeByName } from './harness.js';

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
let served: BedrockGateway;
let openai: OpenAI;
let CLIENTS: Record<ClientProtocol, ClientDriver>;

beforeAll(async () => {
  fake = await startFakeBedrock();
  served = await serveBedrockGateway(fake);
  openai = new OpenAI({ baseURL: `${served.url}/v1`, apiKey: 'sk-test', maxRetries: 0 });
  CLIENTS = clientDrivers(openai, new Anthropic({ baseURL: served.url, apiKey: 'sk-test', maxRetries: 0 }));
});
afterAll(async () => {
  await served.close();
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

const cells = (['chat', 'responses', 'messages'] as const).flatMap((client) => (['nova', 'claude'] as const).map((family) => [client, family] as const));

describe('openai and @anthropic-ai/sdk clients × Amazon Bedrock', () => {
  it.each(cells)('%s → %s: a JSON answer with its usage, the request signed and sent where it belongs', async (client, family) => {
    const bedrock = FAMILIES[family];
    fake.reply({ text: ['Hello', ' there'], usage: USAGE });
    const answer = await CLIENTS[client].ask(bedrock.model, 'Be brief.');
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
