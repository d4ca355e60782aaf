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
import { type ClientDriver, clientDrivers, messageOf } from './client-drivers.js';
import { type ClientProtocol, expectedUsage, toolExchange, USAGE, weatherAndTimeExchange } from './harness.js';

type Json = Record<string, any>;

/**
 * The `openai` (Chat and Responses helpers) and `@anthropic-ai/sdk` clients × Azure OpenAI's
 * deployment URLs (dated `api-version`: Chat Completions only, Responses and Messages clients
 * translated) and its v1 API (Chat and Responses passed through, Messages translated): JSON,
 * the stream helper, a two-turn parallel tool loop, usage, Azure's 429 with its retry headers, a
 * 400 naming the field, and a stream cut mid-answer.
 */
let h: AzureHarness;
let CLIENTS: Record<ClientProtocol, ClientDriver>;
beforeAll(async () => {
  h = await startAzureHarness();
  CLIENTS = clientDrivers(h.openai, h.anthropic);
});
afterAll(() => h.close());
beforeEach(() => {
  h.fake.reset();
  h.usage.length = 0;
});

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
  const model = AZURE_MODELS[style].chat;
  const protocol = upstreamProtocol(style, client);
  const usage = expectedUsage(protocol, client, USAGE);

  it('JSON: the answer and its usage; the request in Azure’s shape', async () => {
    h.fake.reply({ text: ['Hello', ' from Azure'], usage: USAGE });
    const answer = await CLIENTS[client].ask(model);
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
    const streamed = await CLIENTS[client].stream(model, (delta) => deltas.push(delta));
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
    const turn = await CLIENTS[client].toolTurn(model);
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
    const error = await CLIENTS[client].stream(model, () => {}).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(CLIENTS[client].errorClass);
    const apiError = error as InstanceType<typeof OpenAI.APIError>;
    expect(apiError.status).toBe(429);
    expect(apiError.headers?.get('retry-after')).toBe('7');
    expect(apiError.headers?.get('retry-after-ms')).toBe('7000');
    expect(messageOf(apiError)).toContain('exceeded token rate limit');
  });

  it('a 400 naming the field is the SDK’s 400 naming it', async () => {
    h.fake.reply({ error: AZURE_BAD_FIELD });
    const error = await CLIENTS[client].ask(model).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(CLIENTS[client].errorClass);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(400);
    expect(messageOf(error)).toContain("'temperature'");
    if (error instanceof OpenAI.APIError) expect(error.param).toBe('temperature');
  });

  it('a stream cut mid-answer makes the stream helper throw after the text so far', async () => {
    h.fake.reply({ text: ['Once', ' upon', ' a time'], cutAfter: throughSecondDelta(protocol) });
    const deltas: string[] = [];
    const error = await CLIENTS[client].stream(model, (delta) => deltas.push(delta)).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(CLIENTS[client].errorClass);
    expect(deltas.join('')).toBe('Once upon');
  });
});
