import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { MemoryCacheStore } from '../../src/cache/memory-cache-store.js';
import type { ResponseCacheOptions } from '../../src/cache/response-cache-options.js';
import { createGateway, type Gateway } from '../../src/gateway.js';
import type { UsageEvent } from '../../src/options.js';
import { createAnthropicProvider } from '../../src/providers/anthropic/anthropic-provider.js';
import { createOpenAIProvider } from '../../src/providers/openai/openai-provider.js';
import type { ModelConfig } from '../../src/routing/model.js';
import { startFakeAnthropic } from '../fakes/fake-anthropic.js';
import { startFakeOpenAI } from '../fakes/fake-openai.js';
import type { FakeUpstream } from '../fakes/fake-server.js';
import { serve, type Served } from '../helpers/serve.js';

/** The client protocols and, for each, an upstream that speaks it (passthrough) and one that does not (translation). */
export type UpstreamName = 'chat' | 'responses' | 'anthropic';

/**
 * A gateway with the response cache on, in front of three strict fakes (Chat only, Responses
 * only, Anthropic). Models: `<upstream>` (cache: true) for each fake, `<upstream>-plain` (no
 * cache config), `chat-sampling` (cache with allowSampling). Keys: `sk-a` and `sk-b` (ids `a`,
 * `b`, no cache config), `sk-never` (cache: false), `sk-limited` (2 requests a minute),
 * `sk-scoped` (model `anthropic` only). The memory store reads `clock.now`.
 */
export interface CacheHarness {
  url: string;
  gateway: Gateway;
  fakes: Record<UpstreamName, FakeUpstream>;
  usage: UsageEvent[];
  clock: { now: number };
  store: MemoryCacheStore;
  openai(key?: string): OpenAI;
  anthropic(key?: string): Anthropic;
  /** Upstream calls the fakes accepted, all together. */
  upstreamCalls(): number;
  /** Forgets what the fakes received and were told to answer, and the usage events (between tests). */
  reset(): void;
  /** Usage events settle after the answer: waits until `count` have arrived. */
  usageEvents(count: number): Promise<UsageEvent[]>;
  close(): Promise<void>;
}

export const UPSTREAM_MODELS: Record<UpstreamName, string> = { chat: 'gpt-4.1', responses: 'gpt-5', anthropic: 'claude-sonnet-4-5' };
const PROVIDERS: Record<UpstreamName, string> = { chat: 'oai-chat', responses: 'oai-responses', anthropic: 'claude' };

export async function startCacheHarness(options: { responseCache?: Omit<ResponseCacheOptions, 'store'>; maxEntries?: number } = {}): Promise<CacheHarness> {
  const [chat, responses, anthropic] = await Promise.all([
    startFakeOpenAI({ endpoints: ['chat'] }),
    startFakeOpenAI({ endpoints: ['responses'] }),
    startFakeAnthropic(),
  ]);
  const fakes = { chat, responses, anthropic };
  const clock = { now: 1_000_000 };
  const store = new MemoryCacheStore({ maxEntries: options.maxEntries ?? 100, now: () => clock.now });
  const usage: UsageEvent[] = [];
  const models: ModelConfig[] = [];
  for (const name of ['chat', 'responses', 'anthropic'] as const) {
    models.push({ id: name, provider: PROVIDERS[name], upstreamModel: UPSTREAM_MODELS[name], cache: true });
    models.push({ id: `${name}-plain`, provider: PROVIDERS[name], upstreamModel: UPSTREAM_MODELS[name] });
  }
  models.push({ id: 'chat-sampling', provider: 'oai-chat', upstreamModel: 'gpt-4.1', cache: { allowSampling: true } });
  const gateway = createGateway({
    keys: [
      { key: 'sk-a', id: 'a' },
      { key: 'sk-b', id: 'b' },
      { key: 'sk-never', id: 'never', cache: false },
      { key: 'sk-limited', id: 'limited', limits: { requestsPerMinute: 2 } },
      { key: 'sk-scoped', id: 'scoped', models: ['anthropic'] },
    ],
    providers: {
      'oai-chat': createOpenAIProvider({ baseURL: chat.url + '/v1', apiKey: 'up-key', responses: false }),
      'oai-responses': createOpenAIProvider({ baseURL: responses.url + '/v1', apiKey: 'up-key', responses: true, chat: false }),
      claude: createAnthropicProvider({ baseURL: anthropic.url, apiKey: 'up-key' }),
    },
    models,
    responseCache: { ttlSeconds: 60, ...options.responseCache, store },
    logger: false,
    hooks: { onUsage: (event) => void usage.push(event) },
  });
  const served: Served = await serve(gateway);
  return {
    url: served.url,
    gateway,
    fakes,
    usage,
    clock,
    store,
    openai: (key = 'sk-a') => new OpenAI({ baseURL: served.url + '/v1', apiKey: key, maxRetries: 0 }),
    anthropic: (key = 'sk-a') => new Anthropic({ baseURL: served.url, apiKey: key, maxRetries: 0 }),
    upstreamCalls: () => Object.values(fakes).reduce((sum, fake) => sum + fake.accepted().length, 0),
    reset() {
      for (const fake of Object.values(fakes)) fake.reset();
      usage.length = 0;
    },
    async usageEvents(count) {
      for (let i = 0; i < 200 && usage.length < count; i++) await new Promise((resolve) => setImmediate(resolve));
      return usage;
    },
    async close() {
      await served.close();
      await Promise.all(Object.values(fakes).map((fake) => fake.close()));
      await Promise.all(Object.values(gateway.options.providers).map((provider) => provider.close?.()));
    },
  };
}

/** A minimal body of each client protocol asking `model` for `prompt` at temperature 0. */
export function bodyOf(
  protocol: 'chat' | 'responses' | 'messages',
  model: string,
  prompt: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  if (protocol === 'chat') return { model, messages: [{ role: 'user', content: prompt }], temperature: 0, ...extra };
  if (protocol === 'responses') return { model, input: prompt, temperature: 0, store: false, ...extra };
  return { model, max_tokens: 256, messages: [{ role: 'user', content: prompt }], temperature: 0, ...extra };
}

export const PATHS = { chat: '/v1/chat/completions', responses: '/v1/responses', messages: '/v1/messages' } as const;

/** POSTs a body to the gateway with a key, as each protocol's clients send it. */
export function post(
  harness: CacheHarness,
  protocol: keyof typeof PATHS,
  body: unknown,
  headers: Record<string, string> = {},
  key = 'sk-a',
): Promise<Response> {
  const auth: Record<string, string> = protocol === 'messages' ? { 'x-api-key': key, 'anthropic-version': '2023-06-01' } : { authorization: `Bearer ${key}` };
  return fetch(harness.url + PATHS[protocol], {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...auth, ...headers },
    body: JSON.stringify(body),
  });
}
