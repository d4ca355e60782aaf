import { GoogleGenAI } from '@google/genai';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createGateway, type Gateway } from '../../src/gateway.js';
import type { Logger } from '../../src/logger.js';
import type { UsageEvent } from '../../src/options.js';
import { createVertexProvider } from '../../src/providers/vertex/vertex-provider.js';
import { type FakeVertex, startFakeVertex, VERTEX_LOCATION, VERTEX_PROJECT } from '../fakes/fake-vertex.js';
import { fakeVector } from '../fakes/fake-openai-embeddings.js';
import { recordingLogger } from '../helpers/recording-logger.js';
import { serve, type Served } from '../helpers/serve.js';
import { expectedUsage, THROUGH_SECOND_DELTA, TIME_SCHEMA, USAGE, WEATHER_SCHEMA } from './harness.js';

/**
 * Vertex AI through the gateway, with a service-account key: Claude for the Anthropic SDK on
 * passthrough (the body edited for rawPredict) and the OpenAI SDK translated through the
 * Messages codec; Gemini for every client (OpenAI, Anthropic, @google/genai) through the Gemini
 * codec; and the OAuth token's life (one exchange shared, refreshed, dropped after a 401).
 */
let fake: FakeVertex;
let gateway: Gateway;
let served: Served;
let openai: OpenAI;
let anthropic: Anthropic;
const usage: UsageEvent[] = [];

const CLAUDE = 'claude-sonnet-4-5@20250929';
const base = () => `/v1/projects/${VERTEX_PROJECT}/locations/${VERTEX_LOCATION}/publishers/anthropic/models/${CLAUDE}`;
const geminiBase = (model: string) => `/v1/projects/${VERTEX_PROJECT}/locations/${VERTEX_LOCATION}/publishers/google/models/${model}`;
/** Gemini has no cache-write counter. */
const GEMINI_USAGE = { input: 1300, cachedRead: 1000, output: 57, reasoning: 20 };

beforeAll(async () => {
  fake = await startFakeVertex();
  gateway = createGateway({
    keys: [{ key: 'sk-test' }],
    providers: {
      vtx: createVertexProvider({ credentials: fake.serviceAccount, location: VERTEX_LOCATION, baseURL: fake.url }),
      // The publisher named in the id, whatever the id looks like.
      'vtx-token': createVertexProvider({ accessToken: 'host-token', project: VERTEX_PROJECT, location: VERTEX_LOCATION, baseURL: fake.url }),
    },
    models: [
      { id: 'claude-vx', provider: 'vtx', upstreamModel: CLAUDE },
      { id: 'claude-prefixed', provider: 'vtx', upstreamModel: `anthropic/${CLAUDE}` },
      { id: 'claude-host-token', provider: 'vtx-token', upstreamModel: CLAUDE },
      { id: 'gemini-vx', provider: 'vtx', upstreamModel: 'gemini-2.5-flash' },
      { id: 'gemini3-vx', provider: 'vtx', upstreamModel: 'google/gemini-3-pro-preview' },
    ],
    logger: false,
    hooks: { onUsage: (event) => void usage.push(event) },
  });
  served = await serve(gateway);
  openai = new OpenAI({ baseURL: served.url + '/v1', apiKey: 'sk-test', maxRetries: 0 });
  anthropic = new Anthropic({ baseURL: served.url, apiKey: 'sk-test', maxRetries: 0 });
});
afterAll(async () => {
  await served.close();
  await Promise.all(Object.values(gateway.options.providers).map((provider) => provider.close?.()));
  await fake.close();
});
beforeEach(() => {
  fake.reset();
  usage.length = 0;
});

describe('messages client → Claude on Vertex (passthrough)', () => {
  it('answers JSON from rawPredict, the body without model and with anthropic_version', async () => {
    fake.reply({ text: ['Hello', ' world'], usage: USAGE });
    const message = await anthropic.messages.create(
      { model: 'claude-vx', system: 'Be brief.', max_tokens: 100, messages: [{ role: 'user', content: 'Say hello' }] },
      { headers: { 'anthropic-beta': 'context-1m-2025-08-07' } },
    );

    expect(message.content).toEqual([expect.objectContaining({ type: 'text', text: 'Hello world' })]);
    expect(message.usage).toMatchObject(expectedUsage('anthropic', 'messages', USAGE));
    const received = fake.last();
    expect(received.path).toBe(`${base()}:rawPredict`);
    expect(received.body).not.toHaveProperty('model');
    expect(received.body).toMatchObject({ anthropic_version: 'vertex-2023-10-16', max_tokens: 100, system: 'Be brief.' });
    expect(received.headers.authorization).toMatch(/^Bearer ya29\.fake-/);
    expect(received.headers['anthropic-beta']).toBe('context-1m-2025-08-07');
    expect(received.headers).not.toHaveProperty('x-api-key');
    await expect.poll(() => usage.length).toBe(1);
    expect(usage[0]).toMatchObject({ model: 'claude-vx', status: 'ok', usage: { input: USAGE.input, output: USAGE.output } });
  });

  it('streams from streamRawPredict through the SDK helper', async () => {
    fake.reply({ text: ['Hel', 'lo ', 'wörld'], usage: USAGE });
    const stream = anthropic.messages.stream({ model: 'claude-prefixed', max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] });
    const deltas: string[] = [];
    stream.on('text', (delta) => deltas.push(delta));
    const final = await stream.finalMessage();

    expect(deltas).toEqual(['Hel', 'lo ', 'wörld']);
    expect(final.usage).toMatchObject(expectedUsage('anthropic', 'messages', USAGE));
    const received = fake.last();
    expect(received.path).toBe(`${base()}:streamRawPredict`);
    expect(received.body).not.toHaveProperty('model');
    expect(received.body).toMatchObject({ anthropic_version: 'vertex-2023-10-16', stream: true });
  });
});

describe('chat client → Claude on Vertex (translated)', () => {
  it('answers JSON through the Messages codec', async () => {
    fake.reply({ text: ['Bonjour'], usage: USAGE });
    const completion = await openai.chat.completions.create({
      model: 'claude-vx',
      max_completion_tokens: 50,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Say hello in French' },
      ],
    });

    expect(completion.choices[0]!.message.content).toBe('Bonjour');
    expect(completion.model).toBe('claude-vx');
    expect(completion.usage).toMatchObject(expectedUsage('anthropic', 'chat', USAGE));
    const received = fake.last();
    expect(received.path).toBe(`${base()}:rawPredict`);
    expect(received.body).not.toHaveProperty('model');
    expect(received.body).toMatchObject({ anthropic_version: 'vertex-2023-10-16', max_tokens: 50, system: 'Be brief.' });
  });

  it('streams, with usage at the end', async () => {
    fake.reply({ text: ['Un', ' deux'], usage: USAGE });
    const stream = await openai.chat.completions.create({
      model: 'claude-vx',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'Count' }],
    });
    const deltas: string[] = [];
    let finalUsage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta.content;
      if (delta) deltas.push(delta);
      if (chunk.usage) finalUsage = chunk.usage;
    }

    expect(deltas.join('')).toBe('Un deux');
    expect(finalUsage).toMatchObject(expectedUsage('anthropic', 'chat', USAGE));
    const received = fake.last();
    expect(received.path).toBe(`${base()}:streamRawPredict`);
    expect(received.body).toMatchObject({ anthropic_version: 'vertex-2023-10-16', stream: true });
  });

  it('a stream cut mid-answer makes the SDK throw after the text so far', async () => {
    fake.reply({ text: ['Once', ' upon', ' a time'], cutAfter: THROUGH_SECOND_DELTA.anthropic });
    const stream = openai.chat.completions.stream({ model: 'claude-vx', messages: [{ role: 'user', content: 'A story' }] });
    const deltas: string[] = [];
    stream.on('content', (delta) => deltas.push(delta));
    const error = await stream.finalChatCompletion().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(deltas.join('')).toBe('Once upon');
    await expect.poll(() => usage.length).toBe(1);
    expect(usage[0]!.status).toBe('error');
  });

  it('passes a Claude error on in the client’s shape', async () => {
    fake.reply({ error: { status: 400, message: 'messages.0.content: text content blocks must be non-empty', type: 'invalid_request_error' } });
    const error = await openai.chat.completions.create({ model: 'claude-vx', messages: [{ role: 'user', content: 'x' }] }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(400);
    expect((error as Error).message).toContain('text content blocks must be non-empty');
  });
});

describe('Gemini on Vertex (translated for every client)', () => {
  const expectVertexGemini = (model: string, stream: boolean) => {
    const received = fake.last();
    expect(received.url).toBe(`${geminiBase(model)}:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`);
    expect(received.headers.authorization).toMatch(/^Bearer ya29\.fake-/);
    expect(received.headers).not.toHaveProperty('x-goog-api-key');
    return received.body as Record<string, any>;
  };

  it('chat client, JSON: usage with cached and thinking tokens', async () => {
    fake.reply({ text: ['Bonjour'], usage: GEMINI_USAGE });
    const completion = await openai.chat.completions.create({
      model: 'gemini-vx',
      max_completion_tokens: 100,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hello in French' },
      ],
    });
    expect(completion.choices[0]!.message.content).toBe('Bonjour');
    expect(completion.usage).toMatchObject({
      prompt_tokens: 1300,
      completion_tokens: 57,
      prompt_tokens_details: { cached_tokens: 1000 },
      completion_tokens_details: { reasoning_tokens: 20 },
    });
    const body = expectVertexGemini('gemini-2.5-flash', false);
    expect(body.systemInstruction).toEqual({ parts: [{ text: 'Be brief.' }] });
    expect(body.contents).toEqual([{ role: 'user', parts: [{ text: 'Hello in French' }] }]);
    expect(body).not.toHaveProperty('model');
  });

  it('chat client, streamed', async () => {
    fake.reply({ text: ['Un', ' deux', ' trois'], usage: GEMINI_USAGE });
    const stream = await openai.chat.completions.create({
      model: 'gemini3-vx',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'Count' }],
    });
    let text = '';
    let finalUsage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.usage) finalUsage = chunk.usage;
    }
    expect(text).toBe('Un deux trois');
    expect(finalUsage).toMatchObject({ prompt_tokens: 1300, completion_tokens: 57 });
    expectVertexGemini('gemini-3-pro-preview', true);
  });

  it('messages client: translated, not passed through (the model is not Claude)', async () => {
    fake.reply({ text: ['Hel', 'lo'], usage: GEMINI_USAGE });
    const final = await anthropic.messages.stream({ model: 'gemini-vx', max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] }).finalMessage();
    expect(final.content).toEqual([expect.objectContaining({ type: 'text', text: 'Hello' })]);
    expect(final.usage).toMatchObject({ output_tokens: 57, cache_read_input_tokens: 1000 });
    const body = expectVertexGemini('gemini-2.5-flash', true);
    expect(body.contents).toEqual([{ role: 'user', parts: [{ text: 'Hi' }] }]);
    expect(body).not.toHaveProperty('max_tokens');
  });

  it('@google/genai client, JSON and streamed', async () => {
    const genai = new GoogleGenAI({ apiKey: 'sk-test', httpOptions: { baseUrl: served.url } });
    fake.reply({ text: ['Salut'], usage: GEMINI_USAGE }, { text: ['A', 'B'], usage: GEMINI_USAGE });
    const response = await genai.models.generateContent({ model: 'gemini-vx', contents: 'Hi' });
    expect(response.text).toBe('Salut');
    expect(response.usageMetadata).toMatchObject({ promptTokenCount: 1300, cachedContentTokenCount: 1000, thoughtsTokenCount: 20 });
    expectVertexGemini('gemini-2.5-flash', false);

    let streamed = '';
    for await (const chunk of await genai.models.generateContentStream({ model: 'gemini-vx', contents: 'Hi' })) streamed += chunk.text ?? '';
    expect(streamed).toBe('AB');
    expectVertexGemini('gemini-2.5-flash', true);
  });

  it('a two-turn parallel tool loop on Gemini 3: the replayed call carries the signature the fake issued', async () => {
    const tools: OpenAI.ChatCompletionTool[] = [
      { type: 'function', function: { name: 'get_weather', parameters: WEATHER_SCHEMA } },
      { type: 'function', function: { name: 'get_time', parameters: TIME_SCHEMA } },
    ];
    const question: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather and time in Paris?' }];
    fake.reply({
      toolCalls: [
        { name: 'get_weather', args: ['{"city":"Paris"}'] },
        { name: 'get_time', args: ['{"tz":"Europe/Paris"}'] },
      ],
    });
    const first = await openai.chat.completions.create({ model: 'gemini3-vx', tools, messages: question });
    const calls = first.choices[0]!.message.tool_calls!.map((call) => (call.type === 'function' ? call : undefined)!);
    expect(calls.map((call) => call.function.name)).toEqual(['get_weather', 'get_time']);

    const replay = (ids: string[]): OpenAI.ChatCompletionMessageParam[] => [
      ...question,
      { role: 'assistant', content: null, tool_calls: calls.map((call, i) => ({ id: ids[i]!, type: 'function' as const, function: call.function })) },
      { role: 'tool', tool_call_id: ids[0]!, content: '18°C' },
      { role: 'tool', tool_call_id: ids[1]!, content: '14:05' },
    ];
    fake.reply({ text: ['It is 18°C at 14:05.'] });
    const second = await openai.chat.completions.create({ model: 'gemini3-vx', tools, messages: replay(calls.map((call) => call.id)) });
    expect(second.choices[0]!.message.content).toBe('It is 18°C at 14:05.');
    const replayed = (fake.last().body.contents as Record<string, any>[]).find((content) => content.role === 'model')!;
    expect(replayed.parts[0].thoughtSignature).toEqual(expect.any(String));

    // Ids that lost the signature go with Google's skip value, which Vertex takes too.
    const bare = calls.map((call) => call.id.split('__')[0]!);
    await openai.chat.completions.create({ model: 'gemini3-vx', tools, messages: replay(bare) });
    const skipped = (fake.last().body.contents as Record<string, any>[]).find((content) => content.role === 'model')!;
    expect(skipped.parts[0].thoughtSignature).toBe('skip_thought_signature_validator');
  });

  it('a Gemini error keeps its status and message', async () => {
    fake.reply({ error: { status: 429, message: 'Resource has been exhausted (e.g. check quota).' } });
    const error = await openai.chat.completions.create({ model: 'gemini-vx', messages: [{ role: 'user', content: 'x' }] }).catch((caught: unknown) => caught);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(429);
    expect((error as Error).message).toContain('Resource has been exhausted');
  });
});

describe('the access token', () => {
  const ask = () => openai.chat.completions.create({ model: 'claude-vx', messages: [{ role: 'user', content: 'Hi' }] });

  it('is fetched once and reused across requests', async () => {
    // A fresh provider, so its cache is cold.
    const provider = createVertexProvider({ credentials: fake.serviceAccount, location: VERTEX_LOCATION, baseURL: fake.url });
    const { url, close } = await serveWith(provider);
    try {
      const client = new OpenAI({ baseURL: url + '/v1', apiKey: 'sk-test', maxRetries: 0 });
      for (let i = 0; i < 3; i++) await client.chat.completions.create({ model: 'claude-vx', messages: [{ role: 'user', content: 'Hi' }] });
      expect(fake.accepted()).toHaveLength(3);
      expect(fake.exchanges).toHaveLength(1);
      expect(new Set(fake.accepted().map((request) => request.headers.authorization)).size).toBe(1);
    } finally {
      await close();
    }
  });

  it('is shared by concurrent requests: one exchange', async () => {
    const provider = createVertexProvider({ credentials: fake.serviceAccount, location: VERTEX_LOCATION, baseURL: fake.url });
    const { url, close } = await serveWith(provider);
    try {
      const client = new OpenAI({ baseURL: url + '/v1', apiKey: 'sk-test', maxRetries: 0 });
      const answers = await Promise.all(
        Array.from({ length: 6 }, () => client.chat.completions.create({ model: 'claude-vx', messages: [{ role: 'user', content: 'Hi' }] })),
      );
      expect(answers).toHaveLength(6);
      expect(fake.exchanges).toHaveLength(1);
    } finally {
      await close();
    }
  });

  it('is cached even when it lives less than the refresh margin (replaced at half its life)', async () => {
    fake.scriptTokens({ expiresIn: 120 });
    const provider = createVertexProvider({ credentials: fake.serviceAccount, location: VERTEX_LOCATION, baseURL: fake.url });
    const { url, close } = await serveWith(provider);
    try {
      const client = new OpenAI({ baseURL: url + '/v1', apiKey: 'sk-test', maxRetries: 0 });
      for (let i = 0; i < 3; i++) await client.chat.completions.create({ model: 'claude-vx', messages: [{ role: 'user', content: 'Hi' }] });
      expect(fake.exchanges).toHaveLength(1);
      expect(new Set(fake.accepted().map((request) => request.headers.authorization)).size).toBe(1);
    } finally {
      await close();
    }
  });

  it('is dropped after Vertex refuses it, and the next request gets a new one', async () => {
    await ask();
    const exchanged = fake.exchanges.length;
    fake.revokeTokens();
    const error = await ask().catch((caught: unknown) => caught);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
    expect((error as Error).message).toContain('rejected the gateway');
    expect(fake.exchanges).toHaveLength(exchanged);

    await ask();
    expect(fake.exchanges).toHaveLength(exchanged + 1);
    const [refused, retried] = fake.requests.slice(-2);
    expect(refused!.rejected?.status).toBe(401);
    expect(retried!.rejected).toBeUndefined();
    expect(retried!.headers.authorization).not.toBe(refused!.headers.authorization);
  });

  it('is kept when Vertex answers 403 (a permission, not the token): one exchange for any number of refusals', async () => {
    // The fake answers 403 PERMISSION_DENIED for another project, as Vertex does for a model not enabled or an org policy.
    const provider = createVertexProvider({ credentials: fake.serviceAccount, project: 'not-enabled', location: VERTEX_LOCATION, baseURL: fake.url });
    const { url, close } = await serveWith(provider);
    try {
      const client = new OpenAI({ baseURL: url + '/v1', apiKey: 'sk-test', maxRetries: 0 });
      for (let i = 0; i < 5; i++) {
        const error = await client.chat.completions
          .create({ model: 'claude-vx', messages: [{ role: 'user', content: 'Hi' }] })
          .catch((caught: unknown) => caught);
        expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
      }
      expect(fake.requests.map((request) => request.rejected?.status)).toEqual([403, 403, 403, 403, 403]);
      expect(new Set(fake.requests.map((request) => request.headers.authorization)).size).toBe(1);
      expect(fake.exchanges).toHaveLength(1);
    } finally {
      await close();
    }
  });

  it('failing to exchange is a 502 that names no identity, on both client protocols; the reason is logged with the request id', async () => {
    const email = fake.serviceAccount.client_email;
    fake.scriptTokens({ fail: { status: 400, error: 'invalid_grant', description: `Invalid grant: account not found: ${email}` } });
    const provider = createVertexProvider({ credentials: fake.serviceAccount, location: VERTEX_LOCATION, baseURL: fake.url });
    const { lines, logger } = recordingLogger();
    const { url, close } = await serveWith(provider, logger);
    try {
      const chat = (await new OpenAI({ baseURL: url + '/v1', apiKey: 'sk-test', maxRetries: 0 }).chat.completions
        .create({ model: 'claude-vx', messages: [{ role: 'user', content: 'Hi' }] })
        .catch((caught: unknown) => caught)) as InstanceType<typeof OpenAI.APIError>;
      expect(chat).toBeInstanceOf(OpenAI.APIError);
      expect(chat.status).toBe(502);
      expect(chat.error).toEqual({
        message: 'The gateway could not authenticate to Vertex AI.',
        type: 'upstream_error',
        param: null,
        code: 'upstream_token_failed',
      });

      const messages = await new Anthropic({ baseURL: url, apiKey: 'sk-test', maxRetries: 0 }).messages
        .stream({ model: 'claude-vx', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] })
        .finalMessage()
        .catch((caught: unknown) => caught);
      expect(messages).toBeInstanceOf(Anthropic.APIError);
      expect((messages as InstanceType<typeof Anthropic.APIError>).status).toBe(502);
      expect(JSON.stringify((messages as InstanceType<typeof Anthropic.APIError>).error)).not.toMatch(/invalid_grant|iam\.gserviceaccount/);
      expect(fake.accepted()).toHaveLength(0);

      // The operator's log has the reason, under the request id the client got.
      expect(lines.find((line) => line.fields?.requestId === chat.headers?.get('x-request-id'))).toMatchObject({
        message: 'request failed',
        fields: {
          status: 502,
          detail: `Vertex AI access token unavailable: the token endpoint answered 400 (invalid_grant: Invalid grant: account not found: ${email}).`,
        },
      });
    } finally {
      await close();
    }
  });

  it('a host getAccessToken that fails: its error text (account, key path) reaches the log only', async () => {
    const reason = 'Could not refresh access token: invalid_grant for deploy-bot@acme-prod-4711.iam.gserviceaccount.com (key /etc/secrets/gcp/deploy-bot.json)';
    const provider = createVertexProvider({
      getAccessToken: () => Promise.reject(new Error(reason)),
      project: VERTEX_PROJECT,
      location: VERTEX_LOCATION,
      baseURL: fake.url,
    });
    const { lines, logger } = recordingLogger();
    const { url, close } = await serveWith(provider, logger);
    try {
      const response = await fetch(`${url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: 'Bearer sk-test', 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'claude-vx', messages: [{ role: 'user', content: 'Hi' }] }),
      });
      const text = await response.text();
      expect(response.status).toBe(502);
      expect(JSON.parse(text).error.message).toBe('The gateway could not authenticate to Vertex AI.');
      expect(text).not.toMatch(/deploy-bot|\/etc\/secrets|invalid_grant/);
      expect(lines.find((line) => line.fields?.requestId === response.headers.get('x-request-id'))?.fields?.detail).toBe(
        `Vertex AI access token unavailable: getAccessToken failed: ${reason}.`,
      );
    } finally {
      await close();
    }
  });

  it('a token failure another deployment recovers from: the client gets its answer, the log the reason', async () => {
    const broken = createVertexProvider({
      getAccessToken: () => Promise.reject(new Error('metadata server down')),
      project: VERTEX_PROJECT,
      location: VERTEX_LOCATION,
      baseURL: fake.url,
    });
    const good = createVertexProvider({ credentials: fake.serviceAccount, location: VERTEX_LOCATION, baseURL: fake.url });
    const { lines, logger } = recordingLogger();
    const own = createGateway({
      keys: [{ key: 'sk-test' }],
      providers: { broken, good },
      models: [
        {
          id: 'claude-vx',
          deployments: [
            { provider: 'broken', upstreamModel: CLAUDE, weight: 1e9, id: 'broken-first' },
            { provider: 'good', upstreamModel: CLAUDE, weight: 1, id: 'good-second' },
          ],
        },
      ],
      logger,
    });
    const ownServed = await serve(own);
    try {
      const client = new OpenAI({ baseURL: ownServed.url + '/v1', apiKey: 'sk-test', maxRetries: 0 });
      const { data, response } = await client.chat.completions.create({ model: 'claude-vx', messages: [{ role: 'user', content: 'Hi' }] }).withResponse();
      expect(data.choices[0]!.message.content).toBeTruthy();
      expect(lines.find((line) => line.fields?.requestId === response.headers.get('x-request-id'))).toMatchObject({
        message: 'upstream attempt failed',
        fields: { deployment: 'broken-first', detail: 'Vertex AI access token unavailable: getAccessToken failed: metadata server down.' },
      });
    } finally {
      await ownServed.close();
      await Promise.all([broken.close?.(), good.close?.()]);
    }
  });

  it('a host-supplied token is sent as it is (and refused like any other when Vertex does not know it)', async () => {
    const error = await openai.chat.completions
      .create({ model: 'claude-host-token', messages: [{ role: 'user', content: 'Hi' }] })
      .catch((caught: unknown) => caught);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
    const refused = fake.requests.at(-1)!;
    expect(refused.headers.authorization).toBe('Bearer host-token');
    expect(refused.rejected).toEqual({ status: 401, message: expect.stringContaining('invalid authentication credentials') });
    expect(fake.exchanges).toHaveLength(0);
  });
});

describe('the fake refuses what Vertex refuses', () => {
  const post = async (path: string, body: unknown, token?: string) => {
    const response = await fetch(fake.url + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body),
    });
    return { status: response.status, json: (await response.json()) as Record<string, any> };
  };
  const valid = { anthropic_version: 'vertex-2023-10-16', max_tokens: 5, messages: [{ role: 'user', content: 'Hi' }] };
  /** A token the fake issued, through the provider under test. */
  const token = async () => {
    await openai.chat.completions.create({ model: 'claude-vx', messages: [{ role: 'user', content: 'Hi' }] });
    return fake.last().headers.authorization!.slice('Bearer '.length);
  };

  it('a missing or unknown bearer: 401 in Google’s shape', async () => {
    expect(await post(`${base()}:rawPredict`, valid)).toEqual({
      status: 401,
      json: { error: { code: 401, status: 'UNAUTHENTICATED', message: expect.stringContaining('invalid authentication credentials') } },
    });
    expect((await post(`${base()}:rawPredict`, valid, 'ya29.forged')).status).toBe(401);
  });

  it('model in the body, anthropic_version missing or wrong, another location or method', async () => {
    const bearer = await token();
    expect(await post(`${base()}:rawPredict`, valid, bearer)).toMatchObject({ status: 200 });
    expect(await post(`${base()}:rawPredict`, { ...valid, model: CLAUDE }, bearer)).toMatchObject({
      status: 400,
      json: { error: { message: 'model: Extra inputs are not permitted' } },
    });
    const { anthropic_version: _version, ...unversioned } = valid;
    expect(await post(`${base()}:rawPredict`, unversioned, bearer)).toMatchObject({
      status: 400,
      json: { error: { message: 'anthropic_version: Field required' } },
    });
    expect((await post(`${base()}:rawPredict`, { ...valid, anthropic_version: '2023-06-01' }, bearer)).status).toBe(400);
    expect((await post(`${base().replace(VERTEX_LOCATION, 'europe-west1')}:rawPredict`, valid, bearer)).status).toBe(404);
    expect((await post(`${base()}:generateContent`, valid, bearer)).status).toBe(400);
    expect((await post(`${base()}:streamRawPredict`, valid, bearer)).status).toBe(400);
  });
});

/** A gateway of its own around one Vertex provider (a cold token cache). */
async function serveWith(provider: ReturnType<typeof createVertexProvider>, logger: Logger | false = false) {
  const own = createGateway({
    keys: [{ key: 'sk-test' }],
    providers: { vtx: provider },
    models: [{ id: 'claude-vx', provider: 'vtx', upstreamModel: CLAUDE }],
    logger,
  });
  const ownServed = await serve(own);
  return {
    url: ownServed.url,
    close: async () => {
      await ownServed.close();
      await provider.close?.();
    },
  };
}

describe('embeddings on Vertex (:predict)', () => {
  const embedder = () =>
    createGateway({
      keys: [{ key: 'sk-test' }],
      providers: { vtx: createVertexProvider({ credentials: fake.serviceAccount, location: VERTEX_LOCATION, baseURL: fake.url }) },
      models: [
        { id: 'gem-embed', provider: 'vtx', upstreamModel: 'google/gemini-embedding-001', kind: 'embedding' },
        { id: 'text-embed', provider: 'vtx', upstreamModel: 'text-embedding-005', kind: 'embedding' },
      ],
      logger: false,
    });

  it('sends one instance a request to gemini-embedding and batches the older models, usage from Vertex token counts', async () => {
    const embedGateway = embedder();
    const embedServed = await serve(embedGateway);
    try {
      const client = new OpenAI({ baseURL: embedServed.url + '/v1', apiKey: 'sk-test', maxRetries: 0 });
      const gemini = await client.embeddings.create({ model: 'gem-embed', input: ['first text', 'second text'], dimensions: 16 });
      expect(gemini.data.map((item) => item.embedding)).toEqual([fakeVector('first text', 16), fakeVector('second text', 16)]);
      expect(gemini.usage).toEqual({ prompt_tokens: 6, total_tokens: 6 });
      const predicts = fake.accepted().filter((request) => request.path.endsWith(':predict'));
      expect(predicts.map((request) => request.path)).toEqual([
        `${geminiBase('gemini-embedding-001')}:predict`,
        `${geminiBase('gemini-embedding-001')}:predict`,
      ]);
      expect(predicts[0]!.body).toEqual({ instances: [{ content: 'first text' }], parameters: { outputDimensionality: 16 } });
      expect(predicts[0]!.headers.authorization).toMatch(/^Bearer ya29\.fake-/);

      fake.reset();
      const older = await client.embeddings.create({ model: 'text-embed', input: ['a', 'b', 'c'], encoding_format: 'float' });
      expect(older.data).toHaveLength(3);
      expect(fake.accepted().map((request) => request.body.instances.length)).toEqual([3]);

      // Google's own client, its task type passed along.
      const genai = new GoogleGenAI({ apiKey: 'sk-test', httpOptions: { baseUrl: embedServed.url } });
      fake.reset();
      await genai.models.embedContent({ model: 'text-embed', contents: 'a query', config: { taskType: 'RETRIEVAL_QUERY' } });
      expect(fake.last().body).toEqual({ instances: [{ content: 'a query', task_type: 'RETRIEVAL_QUERY' }] });
    } finally {
      await embedServed.close();
      await embedGateway.dispose();
    }
  });

  it('gemini-embedding takes one text a call: many texts make at most 8 calls in flight, answered in input order', async () => {
    const embedGateway = embedder();
    const embedServed = await serve(embedGateway);
    try {
      const client = new OpenAI({ baseURL: embedServed.url + '/v1', apiKey: 'sk-test', maxRetries: 0 });
      const input = Array.from({ length: 40 }, (_, i) => `text number ${i}`);
      // The fake answers only once the calls stop coming: what it has open is what the gateway sent at once.
      fake.holdUntilQuiet(true);
      const answer = await client.embeddings.create({ model: 'gem-embed', input, dimensions: 8, encoding_format: 'float' });
      expect(answer.data.map((item) => item.embedding)).toEqual(input.map((text) => fakeVector(text, 8)));
      expect(fake.accepted().filter((request) => request.path.endsWith(':predict'))).toHaveLength(40);
      expect(fake.peakConcurrency).toBeLessThanOrEqual(8);
    } finally {
      await embedServed.close();
      await embedGateway.dispose();
    }
  });
});
