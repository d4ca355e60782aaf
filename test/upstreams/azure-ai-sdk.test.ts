import { APICallError, generateText, streamText } from 'ai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type AiSdkClient, drain, gatewayModels, streamStory, streamWeatherAndTimeLoop } from './ai-sdk-tools.js';
import {
  AZURE_BAD_FIELD,
  AZURE_MODELS,
  AZURE_RATE_LIMITED,
  AZURE_STYLES,
  type AzureHarness,
  azurePath,
  startAzureHarness,
  throughSecondDelta,
  upstreamProtocol,
} from './azure-harness.js';
import { type ClientProtocol, toolExchangeByName, USAGE, weatherAndTimeByName } from './harness.js';

/**
 * The Vercel AI SDK (`@ai-sdk/openai` Responses and Chat, `@ai-sdk/anthropic`) as clients of
 * the gateway × Azure OpenAI's deployment URLs and v1 API: generateText with usage, streamText
 * to the end, a two-turn parallel tool loop run by the SDK, Azure's 429 and 400 as the SDK's
 * APICallError, and a stream cut mid-answer.
 */
let h: AzureHarness;
beforeAll(async () => {
  h = await startAzureHarness();
});
afterAll(() => h.close());
beforeEach(() => h.fake.reset());

const MODELS = gatewayModels(() => h.url);
/** The protocol each client speaks to the gateway. */
const PROTOCOLS: Record<AiSdkClient, ClientProtocol> = { 'openai responses': 'responses', 'openai chat': 'chat', anthropic: 'messages' };
// The Responses model stores by default and then replays item references, which Azure's
// deployments here cannot resolve (the gateway keeps no conversations for them).
const providerOptions = { openai: { store: false } };

const cases = (Object.keys(PROTOCOLS) as AiSdkClient[]).flatMap((client) => AZURE_STYLES.map((style) => [client, style] as const));

describe.each(cases)('AI SDK %s → Azure %s', (client, style) => {
  const model = () => MODELS[client](AZURE_MODELS[style].chat);
  const protocol = upstreamProtocol(style, PROTOCOLS[client]);

  it('generateText: the answer and the usage with cached and reasoning tokens', async () => {
    h.fake.reply({ text: ['Bonjour', ' le monde'], usage: USAGE });
    const result = await generateText({ model: model(), system: 'Be brief.', prompt: 'Hello in French', maxRetries: 0, providerOptions });
    expect(result.text).toBe('Bonjour le monde');
    expect(result.finishReason).toBe('stop');
    expect(result.usage).toMatchObject({
      inputTokens: USAGE.input,
      outputTokens: USAGE.output,
      inputTokenDetails: expect.objectContaining({ cacheReadTokens: USAGE.cachedRead }),
    });
    const received = h.fake.last();
    expect(received.path).toBe(azurePath(style, protocol));
    expect(received.headers['api-key']).toBe('az-key');
  });

  it('streamText read to the end: every delta and the finish', async () => {
    h.fake.reply({ text: ['Un', ' deux', ' trois'], usage: USAGE });
    const result = streamText({ model: model(), prompt: 'Count to three', maxRetries: 0, providerOptions });
    const deltas: string[] = [];
    for await (const delta of result.textStream) deltas.push(delta);
    expect(deltas.join('')).toBe('Un deux trois');
    expect(await result.finishReason).toBe('stop');
    expect((await result.usage).outputTokens).toBe(USAGE.output);
    expect(h.fake.last().body.stream).toBe(true);
  });

  it('a two-turn parallel tool loop run by the SDK: both results reach Azure, then the answer', async () => {
    h.fake.reply(
      {
        text: ['Checking.'],
        toolCalls: [
          { name: 'get_weather', args: ['{"city":', '"Paris"}'] },
          { name: 'get_time', args: ['{"tz":"Europe/Paris"}'] },
        ],
        usage: USAGE,
      },
      { text: ['It is 18°C', ' at 14:05.'], usage: USAGE },
    );
    const { result, executed } = streamWeatherAndTimeLoop(model(), providerOptions);
    expect(await drain(result)).toBe('Checking.It is 18°C at 14:05.');
    expect(executed).toEqual([{ city: 'Paris' }, { tz: 'Europe/Paris' }]);
    expect((await result.steps).map((step) => step.finishReason)).toEqual(['tool-calls', 'stop']);
    const [, second] = h.fake.accepted();
    expect(second!.path).toBe(azurePath(style, protocol));
    expect(toolExchangeByName(protocol, second!.body)).toEqual(weatherAndTimeByName());
  });

  it('Azure’s 429 is an APICallError 429, retryable, with the retry delay', async () => {
    h.fake.reply({ error: AZURE_RATE_LIMITED });
    const error = await generateText({ model: model(), prompt: 'Hi', maxRetries: 0, providerOptions }).catch((caught: unknown) => caught);
    expect(APICallError.isInstance(error)).toBe(true);
    const call = error as APICallError;
    expect(call.statusCode).toBe(429);
    expect(call.isRetryable).toBe(true);
    expect(call.responseHeaders?.['retry-after']).toBe('7');
    expect(call.message).toContain('exceeded token rate limit');
  });

  it('a 400 naming the field is an APICallError 400 with that message, not retryable', async () => {
    h.fake.reply({ error: AZURE_BAD_FIELD });
    const error = await generateText({ model: model(), prompt: 'Hi', maxRetries: 0, providerOptions }).catch((caught: unknown) => caught);
    expect(APICallError.isInstance(error)).toBe(true);
    expect((error as APICallError).statusCode).toBe(400);
    expect((error as APICallError).isRetryable).toBe(false);
    expect((error as APICallError).message).toContain("'temperature'");
  });

  it('a stream cut mid-answer makes the stream throw after the text so far', async () => {
    h.fake.reply({ text: ['Once', ' upon', ' a time'], cutAfter: throughSecondDelta(protocol) });
    const { result, deltas } = streamStory(model(), providerOptions);
    await expect(drain(result)).rejects.toThrow();
    expect(deltas.join('')).toBe('Once upon');
  });
});
