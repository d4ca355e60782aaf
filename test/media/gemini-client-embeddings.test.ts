import { ApiError, GoogleGenAI } from '@google/genai';
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

/** `@google/genai`'s `models.embedContent` (which calls `:batchEmbedContents`) against the gateway, over each embedding upstream. */
const KEY = 'sk-gemini-embed';

let openaiFake: FakeOpenAIMedia;
let geminiFake: FakeUpstream;
let server: Served;
let genai: GoogleGenAI;
let dispose: () => Promise<void>;
const events: UsageEvent[] = [];

beforeAll(async () => {
  openaiFake = await startFakeOpenAIMedia();
  geminiFake = await startFakeGemini();
  const gateway = createGateway({
    keys: [
      { key: KEY, id: 'key_gemini_embed' },
      { key: 'sk-chat-only', id: 'key_chat', models: ['local-chat'] },
    ],
    providers: {
      local: createLocalProvider(),
      oai: createOpenAIProvider({ baseURL: openaiFake.baseURL, apiKey: 'sk-upstream-openai' }),
      gem: createGeminiProvider({ baseURL: geminiFake.url, apiKey: 'up-key' }),
    },
    models: [
      ...localModels('local'),
      { id: 'emb-oai', provider: 'oai', upstreamModel: 'text-embedding-3-small', kind: 'embedding' },
      { id: 'emb-gem', provider: 'gem', upstreamModel: 'gemini-embedding-001', kind: 'embedding' },
    ],
    hooks: { onUsage: (event) => void events.push(event) },
    logger: false,
  });
  ({ server, close: dispose } = await served(gateway, KEY));
  genai = new GoogleGenAI({ apiKey: KEY, httpOptions: { baseUrl: server.url } });
});

afterAll(async () => {
  await dispose();
  await openaiFake.close();
  await geminiFake.close();
});

describe('Gemini clients embed through the gateway', () => {
  it('on an OpenAI upstream: one vector per content, in order, with outputDimensionality as dimensions', async () => {
    const before = requestsTo(openaiFake, 'POST', '/v1/embeddings').length;
    const answer = await genai.models.embedContent({ model: 'emb-oai', contents: ['first text', 'second text'], config: { outputDimensionality: 64 } });
    expect(answer.embeddings).toHaveLength(2);
    expect(answer.embeddings![0]!.values).toEqual(fakeVector('first text', 64));
    expect(answer.embeddings![1]!.values).toEqual(fakeVector('second text', 64));
    const sent = requestsTo(openaiFake, 'POST', '/v1/embeddings').slice(before);
    expect(sent.map((request) => request.json)).toEqual([
      expect.objectContaining({ model: 'text-embedding-3-small', input: ['first text', 'second text'], dimensions: 64 }),
    ]);
    expect(events.at(-1)).toMatchObject({ kind: 'embedding', model: 'emb-oai', status: 'ok' });
  });

  it('on a Gemini upstream, with the task type passed along', async () => {
    geminiFake.reset();
    const answer = await genai.models.embedContent({ model: 'emb-gem', contents: 'what is a gateway?', config: { taskType: 'RETRIEVAL_QUERY' } });
    expect(answer.embeddings).toHaveLength(1);
    expect(answer.embeddings![0]!.values!.length).toBeGreaterThan(0);
    expect(geminiFake.last().body.requests).toEqual([
      { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'what is a gateway?' }] }, taskType: 'RETRIEVAL_QUERY' },
    ]);
  });

  it('on the local provider, offline and deterministic', async () => {
    const first = await genai.models.embedContent({ model: 'local-embedding', contents: 'same text' });
    const second = await genai.models.embedContent({ model: 'models/local-embedding', contents: 'same text' });
    expect(first.embeddings![0]!.values).toEqual(second.embeddings![0]!.values);
  });

  it('answer :embedContent with one embedding', async () => {
    const response = await fetch(`${server.url}/v1beta/models/local-embedding:embedContent`, {
      method: 'POST',
      headers: { 'x-goog-api-key': KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ content: { parts: [{ text: 'same' }, { text: 'text' }] } }),
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { embedding: { values: number[] } };
    const joined = await genai.models.embedContent({ model: 'local-embedding', contents: 'same\ntext' });
    expect(body.embedding.values).toEqual(joined.embeddings![0]!.values);
  });

  it("refuse what Google refuses, in Google's error shape naming the field", async () => {
    const refused = async (body: unknown, path = 'local-embedding:batchEmbedContents') => {
      const response = await fetch(`${server.url}/v1beta/models/${path}`, {
        method: 'POST',
        headers: { 'x-goog-api-key': KEY, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const json = (await response.json()) as { error: { code: number; status: string; details: { fieldViolations?: { field: string }[] }[] } };
      return { status: response.status, field: json.error.details.find((detail) => detail.fieldViolations)?.fieldViolations?.[0]?.field, json };
    };
    expect(await refused({ requests: [] })).toMatchObject({ status: 400, field: 'requests' });
    expect(await refused({ requests: [{ content: { parts: [{ inlineData: { mimeType: 'image/png', data: 'AA==' } }] } }] })).toMatchObject({
      status: 400,
      field: 'requests[0].content.parts[0].text',
    });
    expect(await refused({ requests: [{ model: 'models/other', content: { parts: [{ text: 'a' }] } }] })).toMatchObject({
      status: 400,
      field: 'requests[0].model',
    });
    expect(
      await refused({
        requests: [
          { content: { parts: [{ text: 'a' }] }, outputDimensionality: 8 },
          { content: { parts: [{ text: 'b' }] }, outputDimensionality: 16 },
        ],
      }),
    ).toMatchObject({ status: 400, field: 'requests[1].outputDimensionality' });
    expect(await refused({ content: { parts: [{ text: 'a' }] }, taskType: 'GUESSING' }, 'local-embedding:embedContent')).toMatchObject({
      status: 400,
      field: 'taskType',
    });
    // A text model is not an embedding model.
    const text = await refused({ requests: [{ content: { parts: [{ text: 'a' }] } }] }, 'local-chat:batchEmbedContents');
    expect(text).toMatchObject({ status: 400, field: 'model' });
    expect(text.json.error.status).toBe('INVALID_ARGUMENT');
  });

  it('find the embedding models in the listing, with their methods', async () => {
    const listed = [];
    for await (const model of await genai.models.list()) listed.push(model);
    expect(listed.find((model) => model.name === 'models/emb-oai')).toMatchObject({ supportedActions: ['embedContent', 'batchEmbedContents'] });
    expect(listed.find((model) => model.name === 'models/local-chat')?.supportedActions).toContain('generateContent');
    expect(listed.some((model) => model.name === 'models/local-image')).toBe(false);
  });

  it('keep to the key scope', async () => {
    const outsider = new GoogleGenAI({ apiKey: 'sk-chat-only', httpOptions: { baseUrl: server.url } });
    const error = await outsider.models.embedContent({ model: 'emb-oai', contents: 'x' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(404);
  });
});
