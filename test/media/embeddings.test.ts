import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGateway, type UsageEvent } from '../../src/index.js';
import { createGeminiProvider } from '../../src/providers/gemini/gemini-provider.js';
import { createLocalProvider, localModels } from '../../src/providers/local/local-provider.js';
import { createOpenAIProvider } from '../../src/providers/openai/openai-provider.js';
import { startFakeGemini } from '../fakes/fake-gemini.js';
import { fakeVector } from '../fakes/fake-openai-embeddings.js';
import { requestsTo, startFakeOpenAIMedia, type FakeOpenAIMedia } from '../fakes/fake-openai-media.js';
import type { FakeUpstream } from '../fakes/fake-server.js';
import type { Served } from '../helpers/serve.js';
import { served } from './helpers.js';

const KEY = 'sk-embed-test';
const CHAT_ONLY_KEY = 'sk-embed-chat-only';

let openaiFake: FakeOpenAIMedia;
let geminiFake: FakeUpstream;
let server: Served;
let client: OpenAI;
let dispose: () => Promise<void>;
const events: UsageEvent[] = [];

beforeAll(async () => {
  openaiFake = await startFakeOpenAIMedia();
  geminiFake = await startFakeGemini();
  const gateway = createGateway({
    keys: [
      { key: KEY, id: 'key_embed' },
      { key: CHAT_ONLY_KEY, id: 'key_chat', models: ['local-chat', 'emb-oai'] },
    ],
    providers: {
      local: createLocalProvider(),
      oai: createOpenAIProvider({ baseURL: openaiFake.baseURL, apiKey: 'sk-upstream-openai' }),
      gem: createGeminiProvider({ baseURL: geminiFake.url, apiKey: 'up-key' }),
    },
    models: [
      ...localModels('local'),
      { id: 'emb-oai', provider: 'oai', upstreamModel: 'text-embedding-3-small', kind: 'embedding' },
      { id: 'emb-ada', provider: 'oai', upstreamModel: 'text-embedding-ada-002', kind: 'embedding' },
      { id: 'emb-gem', provider: 'gem', upstreamModel: 'gemini-embedding-001', kind: 'embedding' },
      {
        id: 'emb-fallback',
        kind: 'embedding',
        deployments: [
          { provider: 'gem', upstreamModel: 'gemini-embedding-001', weight: 1e9, id: 'gem-first' },
          { provider: 'oai', upstreamModel: 'text-embedding-3-small', weight: 1, id: 'oai-second' },
        ],
      },
    ],
    hooks: { onUsage: (event) => void events.push(event) },
    logger: false,
  });
  ({ server, client, close: dispose } = await served(gateway, KEY));
});

afterAll(async () => {
  await dispose();
  await openaiFake.close();
  await geminiFake.close();
});

const cosine = (a: ArrayLike<number>, b: ArrayLike<number>) => {
  let dot = 0;
  for (let at = 0; at < a.length; at++) dot += a[at]! * b[at]!;
  return dot;
};
const norm = (vector: ArrayLike<number>) => Math.sqrt(cosine(vector, vector));

/** The usage event of the last request (hooks run just after the answer). */
async function lastEvent(): Promise<UsageEvent> {
  await new Promise((resolve) => setImmediate(resolve));
  return events.at(-1)!;
}

/** A raw POST, for what the SDK would not send. */
async function post(body: unknown, key = KEY): Promise<{ status: number; json: any }> {
  const response = await fetch(`${server.url}/v1/embeddings`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, json: await response.json() };
}

describe('embeddings: the local model', () => {
  it('one unit vector of 256 floats per input, deterministic, in OpenAI’s shape with usage', async () => {
    const answer = await client.embeddings.create({
      model: 'local-embedding',
      input: ['the cat sat', 'the cat sat', 'stock prices fell'],
      encoding_format: 'float',
    });
    expect(answer).toMatchObject({ object: 'list', model: 'local-embedding', usage: { prompt_tokens: 11, total_tokens: 11 } });
    expect(answer.data.map((item) => [item.object, item.index, item.embedding.length])).toEqual([
      ['embedding', 0, 256],
      ['embedding', 1, 256],
      ['embedding', 2, 256],
    ]);
    const [a, b, c] = answer.data.map((item) => item.embedding);
    expect(norm(a!)).toBeCloseTo(1, 5);
    expect(a).toEqual(b);
    expect(cosine(a!, c!)).toBeLessThan(0.5);
    // Texts sharing words are closer than texts sharing none.
    const near = await client.embeddings.create({ model: 'local-embedding', input: 'the cat sat down', encoding_format: 'float' });
    expect(cosine(a!, near.data[0]!.embedding)).toBeGreaterThan(cosine(a!, c!));
    expect(await lastEvent()).toMatchObject({ endpoint: '/v1/embeddings', kind: 'embedding', model: 'local-embedding', status: 'ok', usage: { input: 4 } });
  });

  it('the SDK’s default (base64 on the wire) decodes to the same float32 values as float', async () => {
    const floats = await client.embeddings.create({ model: 'local-embedding', input: 'hello world', encoding_format: 'float' });
    // No encoding_format: the SDK asks for base64 and decodes it.
    const decoded = await client.embeddings.create({ model: 'local-embedding', input: 'hello world' });
    expect(Array.from(decoded.data[0]!.embedding)).toEqual(floats.data[0]!.embedding);
    const raw = await client.embeddings.create({ model: 'local-embedding', input: 'hello world', encoding_format: 'base64' });
    const base64 = raw.data[0]!.embedding as unknown as string;
    expect(typeof base64).toBe('string');
    const bytes = Buffer.from(base64, 'base64');
    expect(bytes.length).toBe(256 * 4);
    expect(bytes.readFloatLE(4)).toBe(floats.data[0]!.embedding[1]);
  });

  it('dimensions sets the length; token arrays are embedded too', async () => {
    const short = await client.embeddings.create({ model: 'local-embedding', input: 'hello', dimensions: 64, encoding_format: 'float' });
    expect(short.data[0]!.embedding).toHaveLength(64);
    expect(norm(short.data[0]!.embedding)).toBeCloseTo(1, 5);
    const tokens = await client.embeddings.create({ model: 'local-embedding', input: [[15339, 1917], [15339]], encoding_format: 'float' });
    expect(tokens.data).toHaveLength(2);
    expect(tokens.usage.prompt_tokens).toBe(3);
    const one = await client.embeddings.create({ model: 'local-embedding', input: [15339, 1917], encoding_format: 'float' });
    expect(one.data[0]!.embedding).toEqual(tokens.data[0]!.embedding);
    const tooLong = await post({ model: 'local-embedding', input: 'x', dimensions: 4096 });
    expect(tooLong).toMatchObject({ status: 400, json: { error: { param: 'dimensions' } } });
  });
});

describe('embeddings: an openai upstream', () => {
  it('the body goes on with the model mapped (base64 asked of the upstream); floats back under the public id', async () => {
    const answer = await client.embeddings.create({ model: 'emb-oai', input: ['alpha beta', 'gamma'], dimensions: 8, user: 'u-1', encoding_format: 'float' });
    const sent = requestsTo(openaiFake, 'POST', '/v1/embeddings').at(-1)!;
    expect(sent.json).toEqual({ model: 'text-embedding-3-small', input: ['alpha beta', 'gamma'], dimensions: 8, user: 'u-1', encoding_format: 'base64' });
    expect(answer.model).toBe('emb-oai');
    expect(answer.data[0]!.embedding).toEqual(fakeVector('alpha beta', 8));
    expect(answer.data[1]!.embedding).toEqual(fakeVector('gamma', 8));
    expect(answer.usage).toEqual({ prompt_tokens: 3, total_tokens: 3 });
    expect(await lastEvent()).toMatchObject({ model: 'emb-oai', provider: 'oai', upstreamModel: 'text-embedding-3-small', usage: { input: 3 } });
  });

  it('base64 through, the SDK default decoded, token arrays passed on', async () => {
    const decoded = await client.embeddings.create({ model: 'emb-oai', input: 'alpha beta' });
    expect(Array.from(decoded.data[0]!.embedding)).toEqual(fakeVector('alpha beta', 1536));
    const tokens = await client.embeddings.create({ model: 'emb-oai', input: [1, 2, 3], encoding_format: 'float' });
    expect(requestsTo(openaiFake, 'POST', '/v1/embeddings').at(-1)!.json.input).toEqual([1, 2, 3]);
    expect(tokens.data[0]!.embedding).toEqual(fakeVector('1,2,3', 1536));
  });

  it('an upstream 400 (dimensions on a model that cannot shorten) reaches the client as a 400', async () => {
    const error = await client.embeddings.create({ model: 'emb-ada', input: 'x', dimensions: 8 }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).message).toContain('does not support specifying dimensions');
  });
});

describe('embeddings: a gemini upstream', () => {
  it('batchEmbedContents with one text part per input and outputDimensionality; usage counted by the tokenizer', async () => {
    const answer = await client.embeddings.create({ model: 'emb-gem', input: ['hello world', 'good night'], dimensions: 16, encoding_format: 'float' });
    const sent = geminiFake.last();
    expect(sent.path).toBe('/v1beta/models/gemini-embedding-001:batchEmbedContents');
    expect(sent.headers['x-goog-api-key']).toBe('up-key');
    expect(sent.body).toEqual({
      requests: [
        { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'hello world' }] }, outputDimensionality: 16 },
        { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'good night' }] }, outputDimensionality: 16 },
      ],
    });
    expect(answer.model).toBe('emb-gem');
    expect(answer.data.map((item) => item.embedding)).toEqual([fakeVector('hello world', 16), fakeVector('good night', 16)]);
    expect(answer.usage).toEqual({ prompt_tokens: 4, total_tokens: 4 });
  });

  it('more than 100 inputs go in batches of 100, answered in input order', async () => {
    geminiFake.reset();
    const input = Array.from({ length: 230 }, (_, at) => `text number ${at}`);
    const answer = await client.embeddings.create({ model: 'emb-gem', input, dimensions: 4, encoding_format: 'float' });
    expect(geminiFake.accepted().map((request) => request.body.requests.length)).toEqual([100, 100, 30]);
    expect(answer.data.map((item) => item.index)).toEqual(input.map((_, at) => at));
    expect(answer.data[229]!.embedding).toEqual(fakeVector('text number 229', 4));
  });

  it('2048 inputs make 21 batches, at most 8 in flight at once', async () => {
    geminiFake.reset();
    const input = Array.from({ length: 2048 }, (_, at) => `text ${at}`);
    // The fake answers only once the calls stop coming: what it has open is what the gateway sent at once.
    geminiFake.holdUntilQuiet(true);
    const answer = await client.embeddings.create({ model: 'emb-gem', input, dimensions: 4, encoding_format: 'float' });
    const peak = geminiFake.peakConcurrency;
    const batches = geminiFake.accepted().length;
    geminiFake.reset();
    expect(answer.data.map((item) => item.index)).toEqual(input.map((_, at) => at));
    expect(answer.data[2047]!.embedding).toEqual(fakeVector('text 2047', 4));
    expect(batches).toBe(21);
    expect(peak).toBeLessThanOrEqual(8);
  });

  it('base64 from Gemini’s floats; token ids are a 400 naming input, before any upstream call', async () => {
    const raw = await client.embeddings.create({ model: 'emb-gem', input: 'hello', dimensions: 4, encoding_format: 'base64' });
    const bytes = Buffer.from(raw.data[0]!.embedding as unknown as string, 'base64');
    expect([0, 1, 2, 3].map((at) => bytes.readFloatLE(at * 4))).toEqual(fakeVector('hello', 4));
    geminiFake.reset();
    const refused = await post({ model: 'emb-gem', input: [[1, 2]] });
    expect(refused).toMatchObject({ status: 400, json: { error: { param: 'input', code: 'invalid_value' } } });
    expect(geminiFake.requests).toHaveLength(0);
  });

  it('a failing deployment falls back to the next one', async () => {
    geminiFake.reply({ error: { status: 503, message: 'The model is overloaded.' } });
    const { data: answer, response } = await client.embeddings
      .create({ model: 'emb-fallback', input: 'fall back', dimensions: 8, encoding_format: 'float' })
      .withResponse();
    expect(answer.model).toBe('emb-fallback');
    expect(answer.data[0]!.embedding).toEqual(fakeVector('fall back', 8));
    expect(await lastEvent()).toMatchObject({ model: 'emb-fallback', deployment: 'oai-second', attempts: 2, status: 'ok' });
    expect(response.headers.get('x-infergate-route')).toBe('deployment=oai-second; reason=fallback; order=latency; attempts=2');
  });

  it('x-infergate-route-order applies to media routes too, and x-infergate-route says which deployment served', async () => {
    const { response } = await client.embeddings
      .create({ model: 'emb-fallback', input: 'in order', dimensions: 8, encoding_format: 'float' }, { headers: { 'x-infergate-route-order': 'configured' } })
      .withResponse();
    expect(response.headers.get('x-infergate-route')).toBe('deployment=gem-first; reason=configured; order=configured; attempts=1');
    const refused = await client.embeddings
      .create({ model: 'emb-fallback', input: 'in order' }, { headers: { 'x-infergate-route-order': 'random' } })
      .catch((error: unknown) => error);
    expect(refused).toMatchObject({ status: 400, error: { param: 'x-infergate-route-order', code: 'invalid_value' } });
  });
});

describe('embeddings: what the gateway refuses', () => {
  it.each([
    { name: 'no input', body: { model: 'local-embedding' }, param: 'input', code: 'missing_required_parameter' },
    { name: 'an empty string', body: { model: 'local-embedding', input: '' }, param: 'input', code: 'invalid_value' },
    { name: 'an empty array', body: { model: 'local-embedding', input: [] }, param: 'input', code: 'invalid_value' },
    { name: 'an empty string item', body: { model: 'local-embedding', input: ['a', ''] }, param: 'input[1]', code: 'invalid_value' },
    { name: 'a number among strings', body: { model: 'local-embedding', input: ['a', 3] }, param: 'input[1]', code: 'invalid_value' },
    {
      name: 'more than 2048 inputs',
      body: { model: 'local-embedding', input: Array.from({ length: 2049 }, () => 'a') },
      param: 'input',
      code: 'invalid_value',
    },
    { name: 'a fractional token', body: { model: 'local-embedding', input: [1, 2.5] }, param: 'input[1]', code: 'invalid_value' },
    { name: 'a negative token', body: { model: 'local-embedding', input: [[1], [2, -1]] }, param: 'input[1][1]', code: 'invalid_value' },
    { name: 'an empty token array', body: { model: 'local-embedding', input: [[1], []] }, param: 'input[1]', code: 'invalid_value' },
    { name: 'an object', body: { model: 'local-embedding', input: { text: 'a' } }, param: 'input', code: 'invalid_value' },
    { name: 'null items', body: { model: 'local-embedding', input: [null] }, param: 'input[0]', code: 'invalid_value' },
    { name: 'no model', body: { input: 'a' }, param: 'model', code: 'missing_required_parameter' },
    { name: 'an unknown encoding', body: { model: 'local-embedding', input: 'a', encoding_format: 'hex' }, param: 'encoding_format', code: 'invalid_value' },
    { name: 'zero dimensions', body: { model: 'local-embedding', input: 'a', dimensions: 0 }, param: 'dimensions', code: 'invalid_value' },
    { name: 'fractional dimensions', body: { model: 'local-embedding', input: 'a', dimensions: 1.5 }, param: 'dimensions', code: 'invalid_value' },
    { name: 'a numeric user', body: { model: 'local-embedding', input: 'a', user: 7 }, param: 'user', code: 'invalid_value' },
    { name: 'a text model', body: { model: 'local-chat', input: 'a' }, param: 'model', code: 'model_not_supported' },
  ])('$name: 400 naming $param', async ({ body, param, code }) => {
    const { status, json } = await post(body);
    expect(status).toBe(400);
    expect(json.error).toMatchObject({ param, code, type: 'invalid_request_error' });
  });

  it('a model outside the key’s scope is a 404 (as an unknown one); /v1/models lists embedding models as embeddings', async () => {
    expect(await post({ model: 'local-embedding', input: 'a' }, CHAT_ONLY_KEY)).toMatchObject({ status: 404, json: { error: { code: 'model_not_found' } } });
    expect(await post({ model: 'nope', input: 'a' })).toMatchObject({ status: 404, json: { error: { param: 'model', code: 'model_not_found' } } });
    const listing = await client.models.list();
    const embedding = listing.data.find((model) => model.id === 'local-embedding') as unknown as { supported_endpoint_types: string[] };
    expect(embedding.supported_endpoint_types).toEqual(['embeddings']);
  });

  it('a provider without embeddings answers 501', async () => {
    const gateway = createGateway({
      keys: [{ key: KEY }],
      providers: { bare: { type: 'bare', version: 2 } },
      models: [{ id: 'emb', provider: 'bare', kind: 'embedding' }],
      logger: false,
    });
    const response = await gateway.handle(
      new Request('http://gateway/v1/embeddings', {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'emb', input: 'a' }),
      }),
    );
    expect(response.status).toBe(501);
    await gateway.dispose();
  });

  it('a provider answering the wrong number of vectors, or the wrong length, is a 502', async () => {
    const gateway = createGateway({
      keys: [{ key: KEY }],
      providers: {
        wrong: { type: 'wrong', embed: async () => ({ data: [{ index: 0, embedding: [1, 0] }], usage: { prompt_tokens: 1 } }) },
      },
      models: [{ id: 'emb', provider: 'wrong', kind: 'embedding' }],
      logger: false,
    });
    const ask = (body: unknown) =>
      gateway.handle(
        new Request('http://gateway/v1/embeddings', {
          method: 'POST',
          headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        }),
      );
    expect((await ask({ model: 'emb', input: 'a' })).status).toBe(200);
    expect((await ask({ model: 'emb', input: ['a', 'b'] })).status).toBe(502);
    expect((await ask({ model: 'emb', input: 'a', dimensions: 3 })).status).toBe(502);
    await gateway.dispose();
  });
});
