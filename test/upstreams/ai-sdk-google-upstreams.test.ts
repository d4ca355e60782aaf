import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { APICallError, generateText, type LanguageModel, streamText } from 'ai';
import { drain, streamStory, streamWeatherAndTimeLoop } from './ai-sdk-tools.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createGateway, type Gateway } from '../../src/gateway.js';
import { createGeminiProvider } from '../../src/providers/gemini/gemini-provider.js';
import { createVertexProvider } from '../../src/providers/vertex/vertex-provider.js';
import { startFakeGemini } from '../fakes/fake-gemini.js';
import type { FakeUpstream, NeutralUsage, UpstreamErrorSpec } from '../fakes/fake-server.js';
import { type FakeVertex, startFakeVertex, VERTEX_LOCATION, VERTEX_PROJECT } from '../fakes/fake-vertex.js';
import { serve, type Served } from '../helpers/serve.js';
import { THROUGH_SECOND_DELTA, USAGE, rateLimited, weatherAndTimeByName, toolExchangeByName } from './harness.js';

type Json = Record<string, any>;

/**
 * The Vercel AI SDK (`@ai-sdk/openai` Responses and Chat, `@ai-sdk/anthropic`) as clients of the
 * gateway over Google's upstreams: the Gemini API (`gemini` provider) and Vertex AI, Gemini and
 * Claude. Each cell: generateText, streamText read to the end, a two-turn parallel tool loop
 * driven by the SDK itself (on Gemini 3, whose fake refuses a replayed call without its
 * signature), usage with cached and thinking tokens as the SDK reports them, upstream errors as
 * the SDK's APICallError, and a stream cut mid-answer.
 */
let gemini: Awaited<ReturnType<typeof startFakeGemini>>;
let vertex: FakeVertex;
let gateway: Gateway;
let served: Served;

beforeAll(async () => {
  [gemini, vertex] = await Promise.all([startFakeGemini(), startFakeVertex()]);
  gateway = createGateway({
    keys: [{ key: 'sk-test' }],
    providers: {
      gem: createGeminiProvider({ baseURL: gemini.url, apiKey: 'up-key' }),
      vtx: createVertexProvider({ credentials: vertex.serviceAccount, location: VERTEX_LOCATION, baseURL: vertex.url }),
    },
    models: [
      { id: 'gem3', provider: 'gem', upstreamModel: 'gemini-3-pro-preview' },
      { id: 'vx-gem3', provider: 'vtx', upstreamModel: 'google/gemini-3-pro-preview' },
      { id: 'vx-claude', provider: 'vtx', upstreamModel: 'claude-sonnet-4-5@20250929' },
    ],
    logger: false,
  });
  served = await serve(gateway);
});
afterAll(async () => {
  await served.close();
  await Promise.all(Object.values(gateway.options.providers).map((provider) => provider.close?.()));
  await Promise.all([gemini.close(), vertex.close()]);
});
beforeEach(() => {
  gemini.reset();
  vertex.reset();
});

type UpstreamName = 'gemini' | 'vertex-gemini' | 'vertex-anthropic';
type ClientName = 'openai responses' | 'openai chat' | 'anthropic';

interface GoogleUpstream {
  model: string;
  fake: () => FakeUpstream;
  /** The path (and query) the upstream received for a JSON or a streamed request. */
  url: (stream: boolean) => string;
  /** The counters the upstream reports (Gemini has no cache-write counter). */
  usage: NeutralUsage;
  /** Frames through the second text delta. */
  throughSecondDelta: number;
  rateLimited: UpstreamErrorSpec;
  badField: UpstreamErrorSpec;
}

const vertexModels = `/v1/projects/${VERTEX_PROJECT}/locations/${VERTEX_LOCATION}/publishers`;
const GEMINI_USAGE: NeutralUsage = { input: 1300, cachedRead: 1000, output: 57, reasoning: 20 };
const geminiBadField: UpstreamErrorSpec = {
  status: 400,
  message: 'Invalid JSON payload received. Unknown name "foo" at \'generation_config\': Cannot find field.',
};

const UPSTREAMS: Record<UpstreamName, GoogleUpstream> = {
  gemini: {
    model: 'gem3',
    fake: () => gemini,
    url: (stream) => `/v1beta/models/gemini-3-pro-preview:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`,
    usage: GEMINI_USAGE,
    throughSecondDelta: 2,
    // Google's RetryInfo in the body is the retry delay (the fake adds it to every 429).
    rateLimited: { status: 429, message: 'Resource has been exhausted (e.g. check quota).' },
    badField: geminiBadField,
  },
  'vertex-gemini': {
    model: 'vx-gem3',
    fake: () => vertex,
    url: (stream) => `${vertexModels}/google/models/gemini-3-pro-preview:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`,
    usage: GEMINI_USAGE,
    throughSecondDelta: 2,
    rateLimited: { status: 429, message: 'Resource has been exhausted (e.g. check quota).' },
    badField: geminiBadField,
  },
  'vertex-anthropic': {
    model: 'vx-claude',
    fake: () => vertex,
    url: (stream) => `${vertexModels}/anthropic/models/claude-sonnet-4-5@20250929:${stream ? 'streamRawPredict' : 'rawPredict'}`,
    usage: USAGE,
    throughSecondDelta: THROUGH_SECOND_DELTA.anthropic,
    rateLimited: rateLimited('anthropic'),
    badField: { status: 400, message: 'max_tokens: Input should be less than or equal to 64000', type: 'invalid_request_error' },
  },
};

const gatewayOpenAI = () => createOpenAI({ baseURL: `${served.url}/v1`, apiKey: 'sk-test' });
const CLIENTS: Record<ClientName, (model: string) => LanguageModel> = {
  'openai responses': (model) => gatewayOpenAI().responses(model),
  'openai chat': (model) => gatewayOpenAI().chat(model),
  anthropic: (model) => createAnthropic({ baseURL: `${served.url}/v1`, apiKey: 'sk-test' })(model),
};

/**
 * The usage the SDK must report: the whole prompt with its cached part, the whole answer with its
 * thinking part. Claude reports no thinking counter (thinking is inside its output tokens): the
 * OpenAI clients read 0, the Anthropic client none.
 */
function expectedUsage(client: ClientName, upstream: UpstreamName): Json {
  const counted = UPSTREAMS[upstream].usage;
  const reasoning = upstream !== 'vertex-anthropic' ? counted.reasoning : client === 'anthropic' ? undefined : 0;
  return {
    inputTokens: counted.input,
    outputTokens: counted.output,
    totalTokens: counted.input + counted.output,
    inputTokenDetails: expect.objectContaining({ cacheReadTokens: counted.cachedRead }),
    outputTokenDetails: expect.objectContaining({ reasoningTokens: reasoning }),
  };
}

const CALLS = [
  { name: 'get_weather', args: ['{"city":', '"Paris"}'] },
  { name: 'get_time', args: ['{"tz":"Europe/Paris"}'] },
];

const cases = (Object.keys(CLIENTS) as ClientName[]).flatMap((client) =>
  (Object.keys(UPSTREAMS) as UpstreamName[]).map((upstream) => [client, upstream] as const),
);

describe.each(cases)('AI SDK %s → %s', (client, upstream) => {
  const up = UPSTREAMS[upstream];
  const model = () => CLIENTS[client](up.model);
  // The Responses model stores by default and then replays item references, which these models
  // cannot resolve (they keep no conversations).
  const providerOptions = { openai: { store: false } };

  it('generateText: the answer, the usage with cached and thinking tokens', async () => {
    up.fake().reply({ text: ['Bonjour', ' le monde'], usage: up.usage });
    const result = await generateText({ model: model(), system: 'Be brief.', prompt: 'Hello in French', maxRetries: 0, providerOptions });

    expect(result.text).toBe('Bonjour le monde');
    expect(result.finishReason).toBe('stop');
    expect(result.usage).toMatchObject(expectedUsage(client, upstream));
    const received = up.fake().last();
    expect(received.url).toBe(up.url(false));
    if (upstream === 'gemini') expect(received.headers['x-goog-api-key']).toBe('up-key');
    else expect(received.headers.authorization).toMatch(/^Bearer ya29\.fake-/);
    expect(JSON.stringify(received.headers)).not.toContain('sk-test');
    if (upstream === 'vertex-anthropic') {
      expect(received.body).toMatchObject({ system: expect.anything(), messages: [{ role: 'user' }] });
      expect(JSON.stringify(received.body.system)).toContain('Be brief.');
    } else {
      expect(received.body.systemInstruction).toEqual({ parts: [{ text: 'Be brief.' }] });
      expect(received.body.contents).toEqual([{ role: 'user', parts: [{ text: 'Hello in French' }] }]);
    }
  });

  it('streamText read to the end: every delta, the finish and the usage', async () => {
    up.fake().reply({ text: ['Un', ' deux', ' trois'], usage: up.usage });
    const result = streamText({ model: model(), prompt: 'Count to three', maxRetries: 0, providerOptions });
    const deltas: string[] = [];
    for await (const delta of result.textStream) deltas.push(delta);

    expect(deltas.join('')).toBe('Un deux trois');
    expect(await result.finishReason).toBe('stop');
    expect(await result.usage).toMatchObject(expectedUsage(client, upstream));
    expect(up.fake().last().url).toBe(up.url(true));
  });

  it('a two-turn tool loop with parallel calls: both results reach the upstream, then the answer', async () => {
    up.fake().reply({ text: ['Checking.'], toolCalls: CALLS, usage: up.usage }, { text: ['It is 18°C', ' at 14:05.'], usage: up.usage });
    const { result, executed } = streamWeatherAndTimeLoop(model(), providerOptions);

    expect(await drain(result)).toBe('Checking.It is 18°C at 14:05.');
    expect(executed).toEqual([{ city: 'Paris' }, { tz: 'Europe/Paris' }]);
    const steps = await result.steps;
    expect(steps.map((step) => step.finishReason)).toEqual(['tool-calls', 'stop']);
    expect(steps[0]!.toolCalls.map((call) => call.toolName)).toEqual(['get_weather', 'get_time']);
    expect((await result.totalUsage).inputTokens).toBe(2 * up.usage.input);

    const [turn1, turn2] = up.fake().accepted();
    expect(turn1!.url).toBe(up.url(true));
    expect(toolExchangeByName(upstream === 'vertex-anthropic' ? 'anthropic' : 'gemini', turn2!.body)).toEqual(weatherAndTimeByName());
    if (upstream !== 'vertex-anthropic') {
      // Gemini 3 refuses a replayed call without the signature it issued: it came back.
      const replayed = (turn2!.body.contents as Json[]).find((content) => content.role === 'model')!;
      const signed = replayed.parts.find((part: Json) => part.functionCall)!;
      expect(signed.thoughtSignature).toEqual(expect.any(String));
    }
  });

  it('an upstream 429 is an APICallError 429, retryable, with the retry delay', async () => {
    up.fake().reply({ error: up.rateLimited });
    const error = await generateText({ model: model(), prompt: 'Hi', maxRetries: 0, providerOptions }).catch((caught: unknown) => caught);

    expect(APICallError.isInstance(error)).toBe(true);
    const call = error as APICallError;
    expect(call.statusCode).toBe(429);
    expect(call.isRetryable).toBe(true);
    expect(call.responseHeaders?.['retry-after']).toBe('7');
    expect(call.message).toContain(upstream === 'vertex-anthropic' ? 'Rate limit reached' : 'Resource has been exhausted');
  });

  it('an upstream 400 naming the field is an APICallError 400 with that message, not retryable', async () => {
    up.fake().reply({ error: up.badField });
    const error = await generateText({ model: model(), prompt: 'Hi', maxRetries: 0, providerOptions }).catch((caught: unknown) => caught);

    expect(APICallError.isInstance(error)).toBe(true);
    expect((error as APICallError).statusCode).toBe(400);
    expect((error as APICallError).isRetryable).toBe(false);
    expect((error as APICallError).message).toContain(upstream === 'vertex-anthropic' ? 'max_tokens' : 'Unknown name "foo"');
  });

  it('an upstream 403 is the gateway’s 502, its credentials’ fault and not the client’s, the upstream text kept out', async () => {
    up.fake().reply({ error: { status: 403, message: 'Permission denied on resource project secret-project-42.', type: 'permission_error' } });
    const error = await generateText({ model: model(), prompt: 'Hi', maxRetries: 0, providerOptions }).catch((caught: unknown) => caught);

    expect(APICallError.isInstance(error)).toBe(true);
    expect((error as APICallError).statusCode).toBe(502);
    expect((error as APICallError).message).toContain('rejected the gateway');
    expect((error as APICallError).responseBody).not.toContain('secret-project-42');
  });

  it('a stream cut mid-answer makes the stream helper throw after the text so far', async () => {
    up.fake().reply({ text: ['Once', ' upon', ' a time'], cutAfter: up.throughSecondDelta });
    const { result, deltas } = streamStory(model(), providerOptions);

    await expect(drain(result)).rejects.toThrow();
    expect(deltas.join('')).toBe('Once upon');
    expect(await Promise.resolve(result.finishReason).catch(() => 'rejected')).not.toBe('stop');
  });
});
