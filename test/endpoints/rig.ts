import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { createGateway, type Gateway } from '../../src/gateway.js';
import type { UsageEvent } from '../../src/options.js';
import { createAnthropicProvider } from '../../src/providers/anthropic/anthropic-provider.js';
import { createOpenAIProvider } from '../../src/providers/openai/openai-provider.js';
import { startFakeAnthropic } from '../fakes/fake-anthropic.js';
import { startFakeOpenAI } from '../fakes/fake-openai.js';
import type { FakeUpstream } from '../fakes/fake-server.js';
import { freePort, serve, type Served } from '../helpers/serve.js';

/**
 * A gateway over the three strict fakes (Chat-only, Responses-only, Anthropic) for the agent
 * endpoints, with two keys (`sk-a`, `sk-b`) to check that stored responses stay with their key.
 * Models: `gpt-chat`, `gpt-resp`, `claude` on their upstreams; `gpt-chat-state` keeps
 * conversation state in the gateway; `gpt-resp-conversations` lets `conversation` through to
 * its upstream; `claude-on-chat` is a Claude model behind an
 * OpenAI-compatible server; `claude-down` an Anthropic upstream nothing listens on.
 */
export interface EndpointRig {
  url: string;
  gateway: Gateway;
  chat: FakeUpstream;
  responses: FakeUpstream;
  anthropic: FakeUpstream;
  usage: UsageEvent[];
  openai(key?: string): OpenAI;
  claude(key?: string): Anthropic;
  reset(): void;
  close(): Promise<void>;
}

export async function startEndpointRig(): Promise<EndpointRig> {
  const [chat, responses, anthropic] = await Promise.all([
    startFakeOpenAI({ endpoints: ['chat'] }),
    startFakeOpenAI({ endpoints: ['responses'] }),
    startFakeAnthropic(),
  ]);
  const deadPort = await freePort();
  const usage: UsageEvent[] = [];
  const gateway = createGateway({
    keys: [{ key: 'sk-a' }, { key: 'sk-b' }],
    providers: {
      'oai-chat': createOpenAIProvider({ baseURL: chat.url + '/v1', apiKey: 'up-key', responses: false }),
      'oai-responses': createOpenAIProvider({ baseURL: responses.url + '/v1', apiKey: 'up-key', responses: true, chat: false }),
      claude: createAnthropicProvider({ baseURL: anthropic.url, apiKey: 'up-key' }),
      'claude-down': createAnthropicProvider({ baseURL: `http://127.0.0.1:${deadPort}`, apiKey: 'up-key' }),
    },
    models: [
      { id: 'gpt-chat', provider: 'oai-chat', upstreamModel: 'gpt-4.1' },
      { id: 'gpt-chat-state', provider: 'oai-chat', upstreamModel: 'gpt-4.1', previousResponseId: true },
      { id: 'gpt-resp', provider: 'oai-responses', upstreamModel: 'gpt-5' },
      { id: 'gpt-resp-conversations', provider: 'oai-responses', upstreamModel: 'gpt-5', upstreamConversations: true },
      { id: 'claude', provider: 'claude', upstreamModel: 'claude-sonnet-4-5' },
      { id: 'claude-on-chat', provider: 'oai-chat', upstreamModel: 'claude-sonnet-4-5' },
      { id: 'claude-down', provider: 'claude-down', upstreamModel: 'claude-sonnet-4-5' },
    ],
    logger: false,
    hooks: { onUsage: (event) => void usage.push(event) },
  });
  const served: Served = await serve(gateway);
  const fakes = [chat, responses, anthropic];
  return {
    url: served.url,
    gateway,
    chat,
    responses,
    anthropic,
    usage,
    openai: (key = 'sk-a') => new OpenAI({ baseURL: served.url + '/v1', apiKey: key, maxRetries: 0 }),
    claude: (key = 'sk-a') => new Anthropic({ baseURL: served.url, apiKey: key, maxRetries: 0 }),
    reset() {
      for (const fake of fakes) fake.reset();
      usage.length = 0;
    },
    async close() {
      await served.close();
      await Promise.all(fakes.map((fake) => fake.close()));
      await Promise.all(Object.values(gateway.options.providers).map((provider) => provider.close?.()));
    },
  };
}

/** Waits for the usage hooks of finished requests (they run on later ticks). */
export const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

/** The rig for a test file: started before its tests (handed to `onStart`), reset before each, closed after them. */
export function useEndpointRig(onStart: (rig: EndpointRig) => void): void {
  let rig: EndpointRig | undefined;
  beforeAll(async () => {
    rig = await startEndpointRig();
    onStart(rig);
  });
  afterAll(() => rig?.close());
  beforeEach(() => rig?.reset());
}
