import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryCacheStore } from '../../src/cache/memory-cache-store.js';
import { createGateway, type UsageEvent } from '../../src/index.js';
import { createOpenAIProvider } from '../../src/providers/openai/openai-provider.js';
import { fakeVector } from '../fakes/fake-openai-embeddings.js';
import { requestsTo, startFakeOpenAIMedia, type FakeOpenAIMedia } from '../fakes/fake-openai-media.js';
import { serve, type Served } from '../helpers/serve.js';

/**
 * Embeddings through the response cache: deterministic, so cached whatever the request (opted in
 * like text), keyed without `user` and `encoding_format`, answered in the format each request asks.
 */
let fake: FakeOpenAIMedia;
let server: Served;
const events: UsageEvent[] = [];
const client = (key = 'sk-a') => new OpenAI({ baseURL: `${server.url}/v1`, apiKey: key, maxRetries: 0 });
const embeddingCalls = () => requestsTo(fake, 'POST', '/v1/embeddings').length;

beforeAll(async () => {
  fake = await startFakeOpenAIMedia();
  const gateway = createGateway({
    keys: [
      { key: 'sk-a', id: 'a' },
      { key: 'sk-b', id: 'b' },
    ],
    providers: { oai: createOpenAIProvider({ baseURL: fake.baseURL, apiKey: 'sk-upstream-openai' }) },
    models: [
      { id: 'emb', provider: 'oai', upstreamModel: 'text-embedding-3-small', kind: 'embedding', cache: true },
      { id: 'emb-plain', provider: 'oai', upstreamModel: 'text-embedding-3-small', kind: 'embedding' },
    ],
    responseCache: { store: new MemoryCacheStore() },
    hooks: { onUsage: (event) => void events.push(event) },
    logger: false,
  });
  server = await serve(gateway);
});
afterAll(async () => {
  await server.close();
  await fake.close();
});

describe('response cache: embeddings', () => {
  it('answers a repeat from the cache, as floats or base64 whatever the first asked, with its usage', async () => {
    const input = ['the cache keeps vectors', 'a second input'];
    const first = await client().embeddings.create({ model: 'emb', input, encoding_format: 'float', user: 'one' }).withResponse();
    expect(first.response.headers.get('x-infergate-cache')).toBe('miss');
    const calls = embeddingCalls();
    const second = await client().embeddings.create({ model: 'emb', input, user: 'two' }).withResponse();
    expect(second.response.headers.get('x-infergate-cache')).toBe('hit');
    expect(embeddingCalls()).toBe(calls);
    // The SDK asks for base64 and decodes it: the same vectors as the float miss, to float32 precision.
    for (const [index, text] of input.entries()) {
      const expected = fakeVector(text, 1536);
      expect(second.data.data[index]!.embedding).toHaveLength(1536);
      const gap = (values: number[]) => Math.max(...values.map((value, at) => Math.abs(value - expected[at]!)));
      expect(gap(second.data.data[index]!.embedding)).toBeLessThan(1e-6);
      expect(gap(first.data.data[index]!.embedding)).toBeLessThan(1e-6);
    }
    expect(second.data.usage).toEqual(first.data.usage);
    expect(second.data.model).toBe('emb');
    const hit = events.at(-1)!;
    expect(hit).toMatchObject({ cached: true, attempts: 0, kind: 'embedding', costUsd: 0, cost: 0, keyId: 'a' });
    expect(hit.usage.input).toBe(first.data.usage.prompt_tokens);
  });

  it('keeps keys apart, tells apart other dimensions, and caches nothing unless opted in', async () => {
    await client().embeddings.create({ model: 'emb', input: 'scoped vectors' });
    const calls = embeddingCalls();
    const other = await client('sk-b').embeddings.create({ model: 'emb', input: 'scoped vectors' }).withResponse();
    expect(other.response.headers.get('x-infergate-cache')).toBe('miss');
    const shorter = await client().embeddings.create({ model: 'emb', input: 'scoped vectors', dimensions: 8 }).withResponse();
    expect(shorter.response.headers.get('x-infergate-cache')).toBe('miss');
    expect(shorter.data.data[0]!.embedding).toHaveLength(8);
    expect(embeddingCalls()).toBe(calls + 2);
    for (let i = 0; i < 2; i++) {
      const plain = await client().embeddings.create({ model: 'emb-plain', input: 'not cached' }).withResponse();
      expect(plain.response.headers.get('x-infergate-cache')).toBe('miss');
    }
    expect(embeddingCalls()).toBe(calls + 4);
  });
});
