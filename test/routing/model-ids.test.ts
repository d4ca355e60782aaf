import Anthropic from '@anthropic-ai/sdk';
import { type ApiError, GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createGateway, type Gateway } from '../../src/gateway.js';
import { createBedrockProvider } from '../../src/providers/bedrock/bedrock-provider.js';
import { createLocalProvider } from '../../src/providers/local/local-provider.js';
import { createOpenAIProvider } from '../../src/providers/openai/openai-provider.js';
import { ModelCatalog } from '../../src/routing/catalog.js';
import { type FakeBedrock, startFakeBedrock } from '../fakes/fake-bedrock.js';
import { startFakeOpenAI } from '../fakes/fake-openai.js';
import type { FakeUpstream } from '../fakes/fake-server.js';
import { serve, type Served } from '../helpers/serve.js';
import { SIGNED_BY } from '../upstreams/bedrock-harness.js';

/**
 * Model ids as clients send them: bounded and printable before the catalog or any cache sees
 * them, never a `.`/`..` path segment, and a model outside the key's scope answered exactly like
 * one that does not exist (security review 2026-11-26, findings 3, 8 and 10).
 */
let openaiFake: FakeUpstream;
let bedrockFake: FakeBedrock;
let gateway: Gateway;
let served: Served;

beforeAll(async () => {
  [openaiFake, bedrockFake] = await Promise.all([startFakeOpenAI({ endpoints: ['chat'], models: ['gpt-4.1'] }), startFakeBedrock()]);
  gateway = createGateway({
    keys: [
      { key: 'sk-all', id: 'all' },
      { key: 'sk-scoped', id: 'scoped', models: ['local-chat'] },
      { key: 'sk-user', id: 'user', group: 'users' },
    ],
    providers: {
      local: createLocalProvider({ chunkDelayMs: 0 }),
      oai: createOpenAIProvider({ baseURL: openaiFake.url + '/v1', apiKey: 'up-key', responses: false }),
      aws: createBedrockProvider({ baseURL: bedrockFake.url, ...SIGNED_BY }),
    },
    models: [
      { id: 'local-chat', provider: 'local' },
      { id: 'admin-secret-model', provider: 'local', upstreamModel: 'local-chat', groups: ['admins'] },
      { id: 'oai/*', provider: 'oai' },
      { id: 'bedrock/*', provider: 'aws' },
    ],
    logger: false,
  });
  served = await serve(gateway);
});
afterAll(async () => {
  await served.close();
  await Promise.all(Object.values(gateway.options.providers).map((provider) => provider.close?.()));
  await Promise.all([openaiFake.close(), bedrockFake.close()]);
});
beforeEach(() => {
  openaiFake.reset();
  bedrockFake.reset();
});

const openai = (apiKey: string) => new OpenAI({ baseURL: served.url + '/v1', apiKey, maxRetries: 0 });
const chat = (apiKey: string, model: string) =>
  fetch(served.url + '/v1/chat/completions', {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'Hi' }] }),
  });
const concreteCache = () => (gateway.options.catalog as unknown as { concrete: Map<string, unknown> }).concrete;

describe('a model id’s size', () => {
  it('is at most 256 printable characters: a longer one is a 400 naming `model` that does not repeat it', async () => {
    const long = `oai/${'a'.repeat(1 << 20)}`;
    const response = await chat('sk-all', long);
    expect(response.status).toBe(400);
    const text = await response.text();
    expect(text.length).toBeLessThan(1_000);
    expect(JSON.parse(text).error).toMatchObject({ param: 'model', code: 'invalid_value' });
    expect(JSON.parse(text).error.message).toMatch(/1 to 256 printable characters.*\(1048580 characters\)/);
    for (const model of [`oai/${'a'.repeat(253)}`, 'oai/a\u0085b', 'oai/a\u0000b', '']) {
      const refused = await chat('sk-all', model);
      expect(refused.status, JSON.stringify(model.slice(0, 10))).toBe(400);
      expect(((await refused.json()) as { error: { param: string } }).error.param).toBe('model');
    }
    // 256 characters is still an id (unknown upstream: the fake answers 404).
    const longest = await chat('sk-all', `oai/${'a'.repeat(252)}`);
    expect(longest.status).not.toBe(400);
    await longest.arrayBuffer();
    expect(openaiFake.requests).toHaveLength(1);
  });

  it('is checked in Gemini paths and in GET /v1/models/{id} too', async () => {
    const long = 'b'.repeat(300);
    const generate = await fetch(`${served.url}/v1beta/models/${long}:generateContent`, {
      method: 'POST',
      headers: { 'x-goog-api-key': 'sk-all', 'content-type': 'application/json' },
      body: JSON.stringify({ contents: [{ parts: [{ text: 'Hi' }] }] }),
    });
    expect(generate.status).toBe(400);
    expect(await generate.json()).toMatchObject({ error: { code: 400, status: 'INVALID_ARGUMENT' } });
    const genai = new GoogleGenAI({ apiKey: 'sk-all', httpOptions: { baseUrl: served.url } });
    const error = await genai.models.embedContent({ model: long, contents: 'Hi' }).catch((caught: unknown) => caught);
    expect((error as ApiError).status).toBe(400);
    const retrieve = await openai('sk-all')
      .models.retrieve(long)
      .catch((caught: unknown) => caught);
    expect(retrieve).toBeInstanceOf(OpenAI.BadRequestError);
    expect((retrieve as InstanceType<typeof OpenAI.APIError>).param).toBe('model');
  });

  it('is checked in the configured catalog too', () => {
    expect(() => new ModelCatalog([{ id: 'x'.repeat(257), provider: 'p' }], ['p'])).toThrow(/models\[0\]\.id .* cannot be named by a request/);
  });
});

describe('wildcard names', () => {
  it('that are or hold a `.`/`..` segment are a 400 naming `model`, and reach no upstream path', async () => {
    for (const model of ['bedrock/..', 'bedrock/.', 'bedrock/a/../converse', 'oai/./x', 'bedrock/../../model/x']) {
      const response = await chat('sk-all', model);
      expect(response.status, model).toBe(400);
      expect(((await response.json()) as { error: { param: string } }).error.param).toBe('model');
    }
    // Dots inside a name are fine: Bedrock ids are full of them.
    const nova = await openai('sk-all').chat.completions.create({ model: 'bedrock/amazon.nova-pro-v1:0', messages: [{ role: 'user', content: 'Hi' }] });
    expect(nova.choices[0]!.message.content).toBe('Hello from Bedrock.');
    expect(bedrockFake.requests.map((request) => request.url)).toEqual(['/model/amazon.nova-pro-v1%3A0/converse']);
  });

  it('are remembered only for a key that may use them: a scoped key cannot fill the cache', async () => {
    concreteCache().clear();
    for (let i = 0; i < 50; i++) {
      const response = await chat('sk-scoped', `oai/made-up-${i}`);
      expect(response.status).toBe(404);
      await response.arrayBuffer();
    }
    expect(concreteCache().size).toBe(0);
    const served200 = await chat('sk-all', 'oai/gpt-4.1');
    expect(served200.status).toBe(200);
    await served200.arrayBuffer();
    expect([...concreteCache().keys()]).toEqual(['oai/gpt-4.1']);
  });
});

describe('a model the key may not use', () => {
  /** Status and body of an answer, the model's name and the request's own id (Anthropic's `request_id`) blanked out. */
  async function shape(response: Response, model: string): Promise<{ status: number; body: string }> {
    let body = (await response.text()).replaceAll(model, '<model>');
    const requestId = response.headers.get('request-id');
    if (requestId) body = body.replaceAll(requestId, '<request-id>');
    return { status: response.status, body };
  }

  it('is answered exactly like a model that does not exist, on every client style', async () => {
    const cases: { key: string; hidden: string; unknown: string }[] = [
      { key: 'sk-scoped', hidden: 'oai/gpt-4.1', unknown: 'nope/gpt-4.1' },
      { key: 'sk-scoped', hidden: 'admin-secret-model', unknown: 'admin-secret-modem' },
      { key: 'sk-user', hidden: 'admin-secret-model', unknown: 'admin-secret-modem' },
    ];
    for (const { key, hidden, unknown } of cases) {
      const requests = (model: string): Promise<Response>[] => [
        chat(key, model),
        fetch(served.url + '/v1/messages', {
          method: 'POST',
          headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
          body: JSON.stringify({ model, max_tokens: 16, messages: [{ role: 'user', content: 'Hi' }] }),
        }),
        fetch(`${served.url}/v1beta/models/${model}:generateContent`, {
          method: 'POST',
          headers: { 'x-goog-api-key': key, 'content-type': 'application/json' },
          body: JSON.stringify({ contents: [{ parts: [{ text: 'Hi' }] }] }),
        }),
      ];
      const hiddenAnswers = await Promise.all(requests(hidden).map(async (answer) => shape(await answer, hidden)));
      const unknownAnswers = await Promise.all(requests(unknown).map(async (answer) => shape(await answer, unknown)));
      expect(hiddenAnswers).toEqual(unknownAnswers);
      expect(hiddenAnswers.map((answer) => answer.status)).toEqual([404, 404, 404]);
    }
    expect(openaiFake.requests).toHaveLength(0);
  });

  it('is a NotFoundError in the OpenAI and Anthropic SDKs and NOT_FOUND in @google/genai', async () => {
    const fromOpenAI = await openai('sk-scoped')
      .chat.completions.create({ model: 'admin-secret-model', messages: [{ role: 'user', content: 'Hi' }] })
      .catch((caught: unknown) => caught);
    expect(fromOpenAI).toBeInstanceOf(OpenAI.NotFoundError);
    expect(fromOpenAI).toMatchObject({ code: 'model_not_found', param: 'model' });
    expect((fromOpenAI as Error).message).toMatch(/does not exist or you do not have access to it/);
    const anthropic = new Anthropic({ baseURL: served.url, apiKey: 'sk-scoped', maxRetries: 0 });
    const fromAnthropic = await anthropic.messages
      .create({ model: 'admin-secret-model', max_tokens: 16, messages: [{ role: 'user', content: 'Hi' }] })
      .catch((caught: unknown) => caught);
    expect(fromAnthropic).toBeInstanceOf(Anthropic.NotFoundError);
    const genai = new GoogleGenAI({ apiKey: 'sk-scoped', httpOptions: { baseUrl: served.url } });
    const fromGoogle = await genai.models.generateContent({ model: 'admin-secret-model', contents: 'Hi' }).catch((caught: unknown) => caught);
    expect((fromGoogle as ApiError).status).toBe(404);
    expect(JSON.parse((fromGoogle as ApiError).message).error).toMatchObject({ code: 404, status: 'NOT_FOUND' });
  });
});
