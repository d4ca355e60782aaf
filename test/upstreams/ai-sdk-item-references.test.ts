import { createOpenAI } from '@ai-sdk/openai';
import { generateText, jsonSchema, stepCountIs, streamText, tool } from 'ai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createGateway } from '../../src/gateway.js';
import { createOpenAIProvider } from '../../src/providers/openai/openai-provider.js';
import { MemoryResponseStore } from '../../src/state/memory-response-store.js';
import { RedisResponseStore } from '../../src/state/redis-response-store.js';
import type { ResponseStore } from '../../src/state/response-store.js';
import { startFakeOpenAI } from '../fakes/fake-openai.js';
import type { FakeUpstream } from '../fakes/fake-server.js';
import { serve, type Served } from '../helpers/serve.js';
import { redisTargets } from '../redis/targets.js';

/**
 * `item_reference` on Responses passthrough to an upstream that stores (code review 12): the
 * Vercel AI SDK's Responses model stores by default and sends an earlier step's reasoning back as
 * `{ type: 'item_reference', id: 'rs_…' }`. The upstream resolves such ids in the operator's
 * account whoever made them, so the gateway lets through only the ids its key's responses
 * produced (recorded from the passthrough answer), with the memory and the Redis store alike.
 */
let upstream: FakeUpstream;
const prefix = `infergate-test-items-${process.pid}-${Date.now()}:`;
const targets = await redisTargets();

beforeAll(async () => {
  upstream = await startFakeOpenAI({ endpoints: ['responses'] });
});

afterAll(async () => {
  await upstream.close();
  for (const target of targets) await target.close(prefix);
});

beforeEach(() => upstream.reset());

const stores: [string, () => ResponseStore][] = [
  ['memory', () => new MemoryResponseStore()],
  ...targets.map((target): [string, () => ResponseStore] => [
    `redis ${target.name}`,
    () => new RedisResponseStore({ ...target.connection, keyPrefix: prefix }),
  ]),
];

describe.each(stores)('item_reference on Responses passthrough (%s store)', (_name, makeStore) => {
  let served: Served;
  let store: ResponseStore;
  beforeAll(async () => {
    store = makeStore();
    const gateway = createGateway({
      keys: [
        { key: 'sk-a', id: 'team-a' },
        { key: 'sk-b', id: 'team-b' },
      ],
      providers: { oai: createOpenAIProvider({ baseURL: upstream.url + '/v1', apiKey: 'up-key', responses: true, chat: false }) },
      models: [{ id: 'gpt-resp', provider: 'oai', upstreamModel: 'gpt-5' }],
      responseStore: store,
      logger: false,
    });
    served = await serve(gateway);
  });
  afterAll(async () => {
    await served.close();
    await store.close?.();
  });

  const weather = tool({
    description: 'Weather of a city',
    inputSchema: jsonSchema<{ city: string }>({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false }),
    execute: async () => '18°C',
  });

  it.each(['streamed', 'JSON'])('a two-step AI SDK tool loop with reasoning and store: true works end to end (%s)', async (mode) => {
    upstream.reply(
      { reasoning: ['The user wants ', 'the weather.'], toolCalls: [{ name: 'get_weather', args: ['{"city":"Paris"}'] }] },
      { text: ['18°C in Paris.'] },
    );
    const model = createOpenAI({ baseURL: served.url + '/v1', apiKey: 'sk-a' }).responses('gpt-resp');
    // `store` is left at the SDK's default (true).
    const options = { model, prompt: 'Weather in Paris?', maxRetries: 0, stopWhen: stepCountIs(3), tools: { get_weather: weather } } as const;
    let text: string;
    if (mode === 'streamed') {
      const result = streamText(options);
      for await (const part of result.fullStream) if (part.type === 'error') throw part.error;
      text = await result.text;
    } else {
      text = (await generateText(options)).text;
    }
    expect(text).toBe('18°C in Paris.');

    expect(upstream.accepted()).toHaveLength(2);
    const [turn1, turn2] = upstream.accepted();
    expect(turn1!.body.store).toBeUndefined();
    // The SDK sent the reasoning back by reference, and the upstream got it unchanged.
    expect(referencedIds(turn2!.body.input)).toEqual([expect.stringMatching(/^rs_/)]);
  });

  it("refuses a key's reference to another key's item, before any upstream call", async () => {
    upstream.reply({ reasoning: ['Thinking.'], toolCalls: [{ name: 'get_weather', args: ['{"city":"Paris"}'] }] });
    const first = await post('sk-a', { model: 'gpt-resp', input: 'Weather in Paris?', tools: [weatherTool] });
    expect(first.status).toBe(200);
    const output = ((await first.json()) as { output: { id: string; type: string }[] }).output;
    const reasoningId = output.find((item) => item.type === 'reasoning')!.id;
    const sent = upstream.accepted().length;

    for (const reference of [{ type: 'item_reference', id: reasoningId }, { id: reasoningId }]) {
      const stolen = await post('sk-b', { model: 'gpt-resp', input: [{ role: 'user', content: 'Hi' }, reference] });
      expect(stolen.status).toBe(404);
      expect(await stolen.json()).toMatchObject({
        error: { param: 'input[1].id', code: 'item_not_found', message: `Item with id '${reasoningId}' not found.` },
      });
      // The same answer as an id nobody made.
      const unknown = await post('sk-b', {
        model: 'gpt-resp',
        input: [
          { role: 'user', content: 'Hi' },
          { ...reference, id: 'rs_nobody' },
        ],
      });
      expect(unknown.status).toBe(404);
      expect(await unknown.json()).toMatchObject({ error: { param: 'input[1].id', code: 'item_not_found' } });
    }
    expect(upstream.accepted()).toHaveLength(sent);

    // Its owner may: the reference goes upstream unchanged.
    upstream.reply({ text: ['Done.'] });
    const own = await post('sk-a', {
      model: 'gpt-resp',
      input: [
        { role: 'user', content: 'Again' },
        { type: 'item_reference', id: reasoningId },
      ],
    });
    expect(own.status).toBe(200);
    expect(upstream.accepted().at(-1)!.body.input[1]).toEqual({ type: 'item_reference', id: reasoningId });
  });

  it('records nothing for a store: false answer, whose items the upstream does not keep', async () => {
    upstream.reply({ reasoning: ['Thinking.'], text: ['Hi.'] });
    const first = await post('sk-a', { model: 'gpt-resp', input: 'Hi', store: false });
    const output = ((await first.json()) as { output: { id: string; type: string }[] }).output;
    const reasoningId = output.find((item) => item.type === 'reasoning')!.id;
    const again = await post('sk-a', { model: 'gpt-resp', input: [{ type: 'item_reference', id: reasoningId }] });
    expect(again.status).toBe(404);
    expect(upstream.accepted()).toHaveLength(1);
  });

  function post(key: string, body: Record<string, unknown>): Promise<Response> {
    return fetch(`${served.url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  }
});

const weatherTool = {
  type: 'function',
  name: 'get_weather',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

/** The ids of the `item_reference`s in a Responses input. */
function referencedIds(input: unknown): string[] {
  return Array.isArray(input) ? input.filter((item) => item?.type === 'item_reference').map((item) => item.id as string) : [];
}
