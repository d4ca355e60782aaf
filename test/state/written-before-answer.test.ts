import OpenAI from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createGateway } from '../../src/gateway.js';
import { createOpenAIProvider } from '../../src/providers/openai/openai-provider.js';
import { MemoryResponseStore } from '../../src/state/memory-response-store.js';
import type { ResponseStore, StoredResponse } from '../../src/state/response-store.js';
import { startFakeOpenAI } from '../fakes/fake-openai.js';
import type { FakeUpstream } from '../fakes/fake-server.js';
import { serve, type Served } from '../helpers/serve.js';

/**
 * A response's record is written before the client has the answer, so the client's next request
 * (on any instance sharing the store) finds it. The store here writes slowly (after 300 ms, as a
 * far-away Redis might): the moment the client sees the answer, the record must be in it.
 */
class SlowStore implements ResponseStore {
  readonly inner = new MemoryResponseStore();
  get(id: string) {
    return this.inner.get(id);
  }
  getItems(keyId: string, ids: string[]) {
    return this.inner.getItems(keyId, ids);
  }
  async put(response: StoredResponse) {
    await new Promise((resolve) => setTimeout(resolve, 300));
    await this.inner.put(response);
  }
}

const store = new SlowStore();
let chat: FakeUpstream;
let responses: FakeUpstream;
let served: Served;
let client: OpenAI;

beforeAll(async () => {
  [chat, responses] = await Promise.all([startFakeOpenAI({ endpoints: ['chat'] }), startFakeOpenAI({ endpoints: ['responses'] })]);
  const gateway = createGateway({
    keys: [{ key: 'sk-a' }],
    providers: {
      'oai-chat': createOpenAIProvider({ baseURL: chat.url + '/v1', apiKey: 'up-key', responses: false }),
      'oai-responses': createOpenAIProvider({ baseURL: responses.url + '/v1', apiKey: 'up-key', responses: true, chat: false }),
    },
    models: [
      { id: 'gpt-chat-state', provider: 'oai-chat', upstreamModel: 'gpt-4.1', previousResponseId: true },
      { id: 'gpt-resp', provider: 'oai-responses', upstreamModel: 'gpt-5' },
    ],
    responseStore: store,
    logger: false,
  });
  served = await serve(gateway);
  client = new OpenAI({ baseURL: served.url + '/v1', apiKey: 'sk-a', maxRetries: 0 });
});
afterAll(async () => {
  await served.close();
  await Promise.all([chat.close(), responses.close()]);
});

it.each(['gpt-chat-state', 'gpt-resp'])('%s: a JSON answer arrives with its record already written', async (model) => {
  const created = await client.responses.create({ model, input: 'Say hi.' });
  expect(await store.inner.get(created.id)).toMatchObject({ id: created.id });
});

it.each(['gpt-chat-state', 'gpt-resp'])('%s: a stream’s response.completed arrives with its record already written', async (model) => {
  const stream = await client.responses.create({ model, input: 'Say hi.', stream: true });
  let found: StoredResponse | undefined;
  let id = '';
  for await (const event of stream) {
    if (event.type !== 'response.completed') continue;
    id = event.response.id;
    found = await store.inner.get(id);
  }
  expect(id).not.toBe('');
  expect(found).toMatchObject({ id });
});
