import { APICallError, generateText, streamText } from 'ai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CLAUDE, type FakeBedrock, NOVA, startFakeBedrock, THROTTLED } from '../fakes/fake-bedrock.js';
import { type AiSdkClient, drain, gatewayModels, streamStory, streamWeatherAndTimeLoop } from './ai-sdk-tools.js';
import { type BedrockGateway, converseExchangeByName, serveBedrockGateway } from './bedrock-harness.js';
import { THROUGH_SECOND_DELTA, toolExchangeByName, USAGE, weatherAndTimeByName } from './harness.js';

/**
 * The Vercel AI SDK (`@ai-sdk/openai` Responses and Chat, `@ai-sdk/anthropic`) as clients of the
 * gateway over Amazon Bedrock: Nova on Converse, Claude on invoke. Each cell: generateText,
 * streamText to the end with usage, a two-turn parallel tool loop run by the SDK, a throttle as
 * a retryable APICallError 429, a validation error as a 400, and a stream cut mid-answer.
 */
let fake: FakeBedrock;
let served: BedrockGateway;

beforeAll(async () => {
  fake = await startFakeBedrock();
  served = await serveBedrockGateway(fake);
});
afterAll(async () => {
  await served.close();
  await fake.close();
});
beforeEach(() => fake.reset());

type Family = 'nova' | 'claude';

const MODELS: Record<Family, { model: string; upstream: string; throughSecondDelta: number }> = {
  nova: { model: 'nova', upstream: NOVA, throughSecondDelta: 3 },
  claude: { model: 'claude-bedrock', upstream: CLAUDE, throughSecondDelta: THROUGH_SECOND_DELTA.anthropic },
};
const path = (family: Family, stream: boolean) =>
  `/model/${encodeURIComponent(MODELS[family].upstream)}/${family === 'nova' ? (stream ? 'converse-stream' : 'converse') : stream ? 'invoke-with-response-stream' : 'invoke'}`;

const CLIENTS = gatewayModels(() => served.url);

const CALLS = [
  { name: 'get_weather', args: ['{"city":', '"Paris"}'] },
  { name: 'get_time', args: ['{"tz":"Europe/Paris"}'] },
];

const cases = (Object.keys(CLIENTS) as AiSdkClient[]).flatMap((client) => (['nova', 'claude'] as const).map((family) => [client, family] as const));

describe.each(cases)('AI SDK %s → Bedrock %s', (client, family) => {
  const model = () => CLIENTS[client](MODELS[family].model);
  const providerOptions = { openai: { store: false } };

  it('generateText: the answer and the usage with its cached part', async () => {
    fake.reply({ text: ['Bonjour', ' le monde'], usage: USAGE });
    const result = await generateText({ model: model(), system: 'Be brief.', prompt: 'Hello in French', maxRetries: 0, providerOptions });
    expect(result.text).toBe('Bonjour le monde');
    expect(result.finishReason).toBe('stop');
    expect(result.usage).toMatchObject({
      inputTokens: USAGE.input,
      outputTokens: USAGE.output,
      inputTokenDetails: expect.objectContaining({ cacheReadTokens: USAGE.cachedRead }),
    });
    expect(fake.last().path).toBe(path(family, false));
  });

  it('streamText read to the end: every delta, the finish and the usage', async () => {
    fake.reply({ text: ['Un', ' deux', ' trois'], usage: USAGE });
    const result = streamText({ model: model(), prompt: 'Count to three', maxRetries: 0, providerOptions });
    const deltas: string[] = [];
    for await (const delta of result.textStream) deltas.push(delta);
    expect(deltas.join('')).toBe('Un deux trois');
    expect(await result.finishReason).toBe('stop');
    expect((await result.usage).inputTokens).toBe(USAGE.input);
    expect(fake.last().path).toBe(path(family, true));
  });

  it('a two-turn tool loop with parallel calls: both results reach Bedrock, then the answer', async () => {
    fake.reply({ text: ['Checking.'], toolCalls: CALLS, usage: USAGE }, { text: ['It is 18°C', ' at 14:05.'], usage: USAGE });
    const { result, executed } = streamWeatherAndTimeLoop(model(), providerOptions);
    expect(await drain(result)).toBe('Checking.It is 18°C at 14:05.');
    expect(executed).toEqual([{ city: 'Paris' }, { tz: 'Europe/Paris' }]);
    expect((await result.steps).map((step) => step.finishReason)).toEqual(['tool-calls', 'stop']);
    const [, turn2] = fake.accepted();
    const exchange = family === 'nova' ? converseExchangeByName(turn2!.body) : toolExchangeByName('anthropic', turn2!.body);
    expect(exchange).toEqual(weatherAndTimeByName());
  });

  it('a throttle is an APICallError 429, retryable, with a retry delay', async () => {
    fake.reply({ error: THROTTLED });
    const error = await generateText({ model: model(), prompt: 'Hi', maxRetries: 0, providerOptions }).catch((caught: unknown) => caught);
    expect(APICallError.isInstance(error)).toBe(true);
    expect((error as APICallError).statusCode).toBe(429);
    expect((error as APICallError).isRetryable).toBe(true);
    expect((error as APICallError).responseHeaders?.['retry-after']).toBe('1');
  });

  it('a validation error is an APICallError 400 with Bedrock’s message, not retryable', async () => {
    fake.reply({
      error: {
        status: 400,
        type: 'ValidationException',
        message: "1 validation error detected: Value '0' at 'inferenceConfig.topP' failed to satisfy constraint",
      },
    });
    const error = await generateText({ model: model(), prompt: 'Hi', maxRetries: 0, providerOptions }).catch((caught: unknown) => caught);
    expect(APICallError.isInstance(error)).toBe(true);
    expect((error as APICallError).statusCode).toBe(400);
    expect((error as APICallError).isRetryable).toBe(false);
    expect((error as APICallError).message).toContain('inferenceConfig.topP');
  });

  it('a stream cut mid-answer makes the stream throw after the text so far', async () => {
    fake.reply({ text: ['Once', ' upon', ' a time'], cutAfter: MODELS[family].throughSecondDelta });
    const { result, deltas } = streamStory(model(), providerOptions);
    await expect(drain(result)).rejects.toThrow();
    expect(deltas.join('')).toBe('Once upon');
  });
});
