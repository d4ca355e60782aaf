import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { createGateway, type Gateway } from '../../src/gateway.js';
import type { PromptCacheKeyScope } from '../../src/policy/prompt-cache-key.js';
import { createOpenAIProvider } from '../../src/providers/openai/openai-provider.js';
import { startFakeOpenAI } from '../fakes/fake-openai.js';
import type { FakeUpstream } from '../fakes/fake-server.js';
import { serve, type Served } from '../helpers/serve.js';

/**
 * Security review 2026-11-26, finding 14: every tenant of an upstream account shares its prompt
 * cache, and a `prompt_cache_key` steers a request to the machines that hold the prefixes sent
 * with it. By default the key a client names is its own API key's: two keys sending the same
 * value reach the upstream with two different ones.
 */

const KEYS = [
  { key: 'sk-tenant-a', id: 'tenant-a', group: 'team' },
  { key: 'sk-tenant-b', id: 'tenant-b', group: 'team' },
  { key: 'sk-tenant-c', id: 'tenant-c', group: 'other' },
];
let upstream: FakeUpstream | undefined;
let gateway: Gateway | undefined;
let served: Served | undefined;

afterEach(async () => {
  await served?.close();
  await gateway?.dispose();
  await upstream?.close();
});

async function start(promptCacheKey?: PromptCacheKeyScope): Promise<string> {
  upstream = await startFakeOpenAI();
  gateway = createGateway({
    keys: KEYS,
    providers: {
      oai: createOpenAIProvider({ baseURL: `${upstream.url}/v1`, apiKey: 'up-key', responses: true }),
      chatOnly: createOpenAIProvider({ baseURL: `${upstream.url}/v1`, apiKey: 'up-key', responses: false }),
    },
    models: [
      { id: 'gpt', provider: 'oai', upstreamModel: 'gpt-4.1' },
      { id: 'gpt-chat', provider: 'chatOnly', upstreamModel: 'gpt-4.1' },
    ],
    logger: { info() {}, warn() {}, error() {} },
    ...(promptCacheKey ? { policies: { promptCacheKey } } : {}),
  });
  served = await serve(gateway);
  return served.url;
}

const client = (url: string, key: string) => new OpenAI({ baseURL: `${url}/v1`, apiKey: key, maxRetries: 0 });

/** The `prompt_cache_key` the upstream got for one chat and one Responses request of each key. */
async function sentKeys(url: string): Promise<string[][]> {
  const sent: string[][] = [];
  for (const { key } of KEYS) {
    const openai = client(url, key);
    await openai.chat.completions.create({ model: 'gpt', messages: [{ role: 'user', content: 'hi' }], prompt_cache_key: 'support-bot-v1' });
    await openai.responses.create({ model: 'gpt', input: 'hi', prompt_cache_key: 'support-bot-v1', stream: true }).then(drain);
    sent.push(upstream!.requests.slice(-2).map((request) => request.body.prompt_cache_key as string));
  }
  return sent;
}

async function drain(stream: AsyncIterable<unknown>): Promise<void> {
  for await (const _event of stream);
}

describe('prompt_cache_key', () => {
  it('is the API key’s own by default: the same value from two keys is two keys upstream, each stable', async () => {
    const url = await start();
    const [a, b, c] = await sentKeys(url);
    for (const sent of [a!, b!, c!]) {
      expect(sent[0]).toMatch(/^[\w-]{43}$/);
      // Chat and Responses name the same cache for one key.
      expect(sent[1]).toBe(sent[0]);
    }
    expect(new Set([a![0], b![0], c![0]]).size).toBe(3);
    expect(JSON.stringify(upstream!.requests.map((request) => request.body))).not.toMatch(/support-bot-v1|tenant-/);
    // The same key sends the same value again: its own cache keeps hitting.
    expect((await sentKeys(url))[0]).toEqual(a);
  });

  it('on a translated request and a token count too', async () => {
    const url = await start();
    const openai = client(url, 'sk-tenant-a');
    await openai.responses.create({ model: 'gpt-chat', input: 'hi', prompt_cache_key: 'support-bot-v1' });
    const translated = upstream!.last();
    expect(translated.path).toBe('/v1/chat/completions');
    await openai.responses.inputTokens.count({ model: 'gpt', input: 'hi', ...({ prompt_cache_key: 'support-bot-v1' } as object) });
    const counted = upstream!.requests.at(-1)!;
    expect(counted.path).toBe('/v1/responses/input_tokens');
    expect(translated.body.prompt_cache_key).toMatch(/^[\w-]{43}$/);
    expect(counted.body.prompt_cache_key).toBe(translated.body.prompt_cache_key);
  });

  it('is the group’s with promptCacheKey "group"', async () => {
    const [a, b, c] = await sentKeys(await start('group'));
    expect(a).toEqual(b);
    expect(a![0]).not.toBe(c![0]);
    expect(a![0]).toMatch(/^[\w-]{43}$/);
  });

  it('goes as written with promptCacheKey "shared"', async () => {
    const sent = await sentKeys(await start('shared'));
    expect(sent.flat()).toEqual(Array(6).fill('support-bot-v1'));
  });

  it('refuses an unknown setting at start', () => {
    expect(() => createGateway({ keys: KEYS, policies: { promptCacheKey: 'tenant' as never } })).toThrow(
      'options.policies.promptCacheKey must be "key", "group" or "shared"',
    );
  });
});
