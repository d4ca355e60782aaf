import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createGateway, type Gateway } from '../../src/gateway.js';
import type { AttemptEvent, UsageEvent } from '../../src/policy/events.js';
import { createAnthropicProvider } from '../../src/providers/anthropic/anthropic-provider.js';
import { createOpenAIProvider } from '../../src/providers/openai/openai-provider.js';
import { deploymentsOf, rendezvousOrder } from '../../src/routing/deployments.js';
import type { ModelEntry } from '../../src/routing/model.js';
import { startFakeAnthropic } from '../fakes/fake-anthropic.js';
import { startFakeOpenAI } from '../fakes/fake-openai.js';
import type { FakeUpstream } from '../fakes/fake-server.js';
import { serve, type Served } from '../helpers/serve.js';

/**
 * Deployments and fallback through the whole gateway: two OpenAI-compatible fakes serve one
 * public model (and an Anthropic fake a second deployment of another), and the client must see
 * one clean answer whatever the first deployment does before its first byte.
 */
let primary: FakeUpstream;
let secondary: FakeUpstream;
let claude: FakeUpstream;
let gateway: Gateway;
let served: Served;
let openai: OpenAI;
const attempts: AttemptEvent[] = [];
const usage: UsageEvent[] = [];

const mixedModel: ModelEntry = {
  id: 'mixed',
  provider: 'primary',
  deployments: [
    { id: 'primary', provider: 'primary', upstreamModel: 'gpt-4.1' },
    { id: 'secondary', provider: 'secondary', upstreamModel: 'gpt-5' },
  ],
};

/** A prompt_cache_key whose sticky order starts with the named deployment, so a test knows who is tried first. */
function cacheKeyStartingWith(first: string): string {
  for (let i = 0; ; i++) {
    const key = `conversation-${i}`;
    if (rendezvousOrder(deploymentsOf(mixedModel), `pck:${key}`)[0]!.id === first) return key;
  }
}

beforeAll(async () => {
  [primary, secondary, claude] = await Promise.all([startFakeOpenAI({ endpoints: ['chat'] }), startFakeOpenAI({ endpoints: ['chat'] }), startFakeAnthropic()]);
  gateway = createGateway({
    keys: [{ key: 'sk-test' }],
    providers: {
      primary: createOpenAIProvider({ baseURL: primary.url + '/v1', apiKey: 'up-key', responses: false }),
      secondary: createOpenAIProvider({ baseURL: secondary.url + '/v1', apiKey: 'up-key', responses: false }),
      claude: createAnthropicProvider({ baseURL: claude.url, apiKey: 'up-key' }),
    },
    models: [
      mixedModel,
      {
        id: 'cross',
        deployments: [
          { id: 'openai', provider: 'primary', upstreamModel: 'gpt-4.1' },
          { id: 'anthropic', provider: 'claude', upstreamModel: 'claude-sonnet-4-5' },
        ],
      },
    ],
    policies: { retry: { backoffMs: 10, maxRetryAfterMs: 2000 } },
    logger: false,
    hooks: { onAttempt: (event) => void attempts.push(event), onUsage: (event) => void usage.push(event) },
  });
  served = await serve(gateway);
  openai = new OpenAI({ baseURL: served.url + '/v1', apiKey: 'sk-test', maxRetries: 0 });
});
afterAll(async () => {
  await served.close();
  await Promise.all([primary.close(), secondary.close(), claude.close()]);
  await Promise.all(Object.values(gateway.options.providers).map((provider) => provider.close?.()));
});
beforeEach(() => {
  for (const fake of [primary, secondary, claude]) fake.reset();
  attempts.length = 0;
  usage.length = 0;
  // Cooldowns from one test must not steer the next.
  gateway.options.policies.health.clear();
});

describe('fallback between deployments', () => {
  it.each([
    ['a 500', { error: { status: 500, message: 'internal', type: 'server_error' } }],
    ['a 429 with a short retry-after', { error: { status: 429, message: 'slow down', type: 'rate_limit_error', headers: { 'retry-after': '1' } } }],
    ['a cut connection', { cutAfter: 0 }],
  ] as const)('a first deployment failing with %s falls back: the client sees one success', async (_, failure) => {
    primary.reply(failure as any);
    secondary.reply({ text: ['From the secondary.'], usage: { input: 10, output: 4 } });
    const completion = await openai.chat.completions.create({
      model: 'mixed',
      messages: [{ role: 'user', content: 'Hi' }],
      prompt_cache_key: cacheKeyStartingWith('primary'),
    });
    expect(completion.choices[0]!.message.content).toBe('From the secondary.');
    expect(secondary.last().body.model).toBe('gpt-5');
    expect(attempts.map((event) => [event.deployment, event.status, event.willRetry])).toEqual([
      ['primary', 'error', true],
      ['secondary', 'ok', false],
    ]);
    await expect.poll(() => usage.length).toBe(1);
    expect(usage[0]).toMatchObject({ deployment: 'secondary', upstreamModel: 'gpt-5', attempts: 2, status: 'ok', usage: { input: 10, output: 4 } });
  });

  it('falls back on a stream before its first byte, and the SDK stream helper sees one clean stream', async () => {
    primary.reply({ error: { status: 503, message: 'overloaded', type: 'server_error' } });
    secondary.reply({ text: ['Stre', 'amed.'] });
    const stream = openai.chat.completions.stream({
      model: 'mixed',
      messages: [{ role: 'user', content: 'Hi' }],
      prompt_cache_key: cacheKeyStartingWith('primary'),
    });
    const final = await stream.finalChatCompletion();
    expect(final.choices[0]!.message.content).toBe('Streamed.');
    expect(attempts.map((event) => event.deployment)).toEqual(['primary', 'secondary']);
  });

  it('falls back across protocols: an OpenAI deployment fails, the Anthropic one answers a Chat client', async () => {
    primary.reply({ error: { status: 502, message: 'bad gateway', type: 'server_error' } });
    claude.reply({ text: ['Claude here.'] });
    // Weighted random order: try until the OpenAI deployment went first (a few draws at most).
    for (let tries = 0; tries < 50; tries++) {
      attempts.length = 0;
      primary.reset();
      primary.reply({ error: { status: 502, message: 'bad gateway', type: 'server_error' } });
      claude.reset();
      claude.reply({ text: ['Claude here.'] });
      const completion = await openai.chat.completions.create({ model: 'cross', messages: [{ role: 'user', content: 'Hi' }] });
      expect(completion.choices[0]!.message.content).toBe('Claude here.');
      if (attempts[0]!.deployment === 'openai') break;
    }
    expect(attempts.map((event) => [event.deployment, event.status])).toEqual([
      ['openai', 'error'],
      ['anthropic', 'ok'],
    ]);
    expect(claude.last().body.model).toBe('claude-sonnet-4-5');
  });

  it('a 429 from every deployment reaches the client with the shortest retry-after the upstreams asked for', async () => {
    primary.reply({ error: { status: 429, message: 'Rate limit reached', type: 'requests', code: 'rate_limit_exceeded', headers: { 'retry-after': '30' } } });
    secondary.reply({ error: { status: 429, message: 'Rate limit reached', type: 'requests', code: 'rate_limit_exceeded', headers: { 'retry-after': '20' } } });
    const response = await fetch(served.url + '/v1/chat/completions', {
      method: 'POST',
      headers: { authorization: 'Bearer sk-test', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'mixed', messages: [{ role: 'user', content: 'Hi' }] }),
    });
    expect(response.status).toBe(429);
    expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(19);
    expect(Number(response.headers.get('retry-after'))).toBeLessThanOrEqual(20);
    const body = (await response.json()) as any;
    expect(body.error).toMatchObject({ code: 'rate_limit_exceeded' });
    // Both deployments were asked once; a 20 s wait is the client's to make, not the gateway's.
    expect(primary.accepted()).toHaveLength(1);
    expect(secondary.accepted()).toHaveLength(1);
    await expect.poll(() => usage.length).toBe(1);
    expect(usage[0]).toMatchObject({ status: 'error', httpStatus: 429, attempts: 2 });
  });

  it('a 400 is the client’s mistake: no fallback, the first answer stands', async () => {
    primary.reply({ error: { status: 400, message: 'Invalid value for temperature', type: 'invalid_request_error', code: 'invalid_value' } });
    secondary.reply({ text: ['never'] });
    await expect(
      openai.chat.completions.create({ model: 'mixed', messages: [{ role: 'user', content: 'Hi' }], prompt_cache_key: cacheKeyStartingWith('primary') }),
    ).rejects.toMatchObject({ status: 400 });
    expect(secondary.accepted()).toHaveLength(0);
  });

  it('never retries once bytes reached the client: a stream cut after its first delta ends with an error, once', async () => {
    primary.reply({ text: ['Once', ' upon', ' a time'], cutAfter: 3 });
    secondary.reply({ text: ['never'] });
    const stream = openai.chat.completions.stream({
      model: 'mixed',
      messages: [{ role: 'user', content: 'Hi' }],
      prompt_cache_key: cacheKeyStartingWith('primary'),
    });
    await expect(stream.finalChatCompletion()).rejects.toThrow();
    expect(secondary.accepted()).toHaveLength(0);
  });

  it('a request marked not replayable (x-infergate-retry: off) is not replayed after a 500, but is after a refused connection', async () => {
    primary.reply({ error: { status: 500, message: 'internal', type: 'server_error' } });
    secondary.reply({ text: ['never'] });
    await expect(
      openai.chat.completions.create(
        { model: 'mixed', messages: [{ role: 'user', content: 'Hi' }], prompt_cache_key: cacheKeyStartingWith('primary') },
        { headers: { 'x-infergate-retry': 'off' } },
      ),
    ).rejects.toMatchObject({ status: 500 });
    expect(secondary.accepted()).toHaveLength(0);
  });

  it('a deployment failing three times in a row cools down: later requests go to the other one first', async () => {
    const key = cacheKeyStartingWith('primary');
    for (let i = 0; i < 3; i++) {
      primary.reply({ error: { status: 500, message: 'internal', type: 'server_error' } });
      secondary.reply({ text: ['ok'] });
      await openai.chat.completions.create({ model: 'mixed', messages: [{ role: 'user', content: 'Hi' }], prompt_cache_key: key });
    }
    attempts.length = 0;
    secondary.reply({ text: ['straight to the secondary'] });
    const completion = await openai.chat.completions.create({ model: 'mixed', messages: [{ role: 'user', content: 'Hi' }], prompt_cache_key: key });
    expect(completion.choices[0]!.message.content).toBe('straight to the secondary');
    expect(attempts.map((event) => event.deployment)).toEqual(['secondary']);
  });

  it('5xx answers to requests marked not replayable still cool the deployment down', async () => {
    const key = cacheKeyStartingWith('primary');
    for (let i = 0; i < 3; i++) {
      primary.reply({ error: { status: 500, message: 'internal', type: 'server_error' } });
      await expect(
        openai.chat.completions.create(
          { model: 'mixed', messages: [{ role: 'user', content: 'Hi' }], prompt_cache_key: key },
          { headers: { 'x-infergate-retry': 'off' } },
        ),
      ).rejects.toMatchObject({ status: 500 });
    }
    expect(secondary.accepted()).toHaveLength(0);
    attempts.length = 0;
    secondary.reply({ text: ['straight to the secondary'] });
    const completion = await openai.chat.completions.create({ model: 'mixed', messages: [{ role: 'user', content: 'Hi' }], prompt_cache_key: key });
    expect(completion.choices[0]!.message.content).toBe('straight to the secondary');
    expect(attempts.map((event) => event.deployment)).toEqual(['secondary']);
  });

  it('the Anthropic SDK gets the same fallback on /v1/messages', async () => {
    primary.reply({ error: { status: 500, message: 'internal', type: 'server_error' } });
    claude.reply({ text: ['Fine.'] });
    const anthropic = new Anthropic({ baseURL: served.url, apiKey: 'sk-test', maxRetries: 0 });
    for (let tries = 0; tries < 50; tries++) {
      attempts.length = 0;
      primary.reset();
      primary.reply({ error: { status: 500, message: 'internal', type: 'server_error' } });
      claude.reset();
      claude.reply({ text: ['Fine.'] });
      const message = await anthropic.messages.create({ model: 'cross', max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] });
      expect(message.content[0]).toMatchObject({ type: 'text', text: 'Fine.' });
      if (attempts[0]!.deployment === 'openai') break;
    }
    expect(attempts.map((event) => event.deployment)).toEqual(['openai', 'anthropic']);
  });
});
