import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createGateway, type Gateway } from '../../src/gateway.js';
import { MemoryHealthBus } from '../../src/policy/memory-health-bus.js';
import { createOpenAIProvider } from '../../src/providers/openai/openai-provider.js';
import { deploymentsOf, rendezvousOrder, type Deployment } from '../../src/routing/deployments.js';
import type { ModelConfig } from '../../src/routing/model.js';
import { startFakeOpenAI } from '../fakes/fake-openai.js';
import type { FakeUpstream } from '../fakes/fake-server.js';
import { delayingProxy } from '../helpers/delaying-proxy.js';
import { serve, type Served } from '../helpers/serve.js';

/**
 * Routing by latency and health through the whole gateway: two OpenAI fakes serve one model,
 * one of them behind a proxy that can hold its first byte, and the official SDK is the client.
 */
let quick: FakeUpstream;
let sluggish: FakeUpstream;
let sluggishProxy: Served;
let sluggishDelayMs = 0;
let gateway: Gateway;
let served: Served;
let openai: OpenAI;

const duo: ModelConfig = {
  id: 'duo',
  deployments: [
    { id: 'quick', provider: 'quick', upstreamModel: 'gpt-4.1' },
    { id: 'sluggish', provider: 'sluggish', upstreamModel: 'gpt-4.1-mini' },
  ],
};
const [quickDeployment, sluggishDeployment] = deploymentsOf({ ...duo, provider: 'quick' }) as [Deployment, Deployment];

function gatewayWith(extra: { healthBus?: MemoryHealthBus; instanceId?: string } = {}): Gateway {
  return createGateway({
    keys: [{ key: 'sk-test' }],
    providers: {
      quick: createOpenAIProvider({ baseURL: quick.url + '/v1', apiKey: 'up-key', responses: false }),
      sluggish: createOpenAIProvider({ baseURL: sluggishProxy.url + '/v1', apiKey: 'up-key', responses: false }),
    },
    models: [duo],
    // A short latency memory, so that a test sees in seconds what takes a minute by default.
    // Prompt cache keys as the client wrote them, so that the test knows where rendezvous puts them.
    policies: { retry: { backoffMs: 1, failuresBeforeCooldown: 2, cooldownMs: 1500 }, routing: { latencyDecayMs: 300 }, promptCacheKey: 'shared', ...extra },
    logger: false,
  });
}

/** A prompt_cache_key that pins requests to the named deployment. */
function keyPinnedTo(deployment: string): string {
  for (let i = 0; ; i++) if (rendezvousOrder([quickDeployment, sluggishDeployment], `pck:pin-${i}`)[0]!.id === deployment) return `pin-${i}`;
}

/** One chat completion; the deployment that served it, read from `x-infergate-route`. */
async function ask(options: { promptCacheKey?: string; order?: string } = {}): Promise<{ route: Record<string, string>; text: string | null }> {
  const { data, response } = await openai.chat.completions
    .create(
      { model: 'duo', messages: [{ role: 'user', content: 'Hi' }], ...(options.promptCacheKey ? { prompt_cache_key: options.promptCacheKey } : {}) },
      options.order ? { headers: { 'x-infergate-route-order': options.order } } : {},
    )
    .withResponse();
  return { route: parseRoute(response.headers.get('x-infergate-route')), text: data.choices[0]!.message.content };
}

function parseRoute(header: string | null): Record<string, string> {
  expect(header).toMatch(/^deployment=[^;]+; reason=[a-z_0-9]+; order=[a-z]+; attempts=\d+$/);
  return Object.fromEntries(header!.split('; ').map((pair) => pair.split('=') as [string, string]));
}

beforeAll(async () => {
  [quick, sluggish] = await Promise.all([startFakeOpenAI({ endpoints: ['chat'] }), startFakeOpenAI({ endpoints: ['chat'], models: ['gpt-4.1-mini'] })]);
  sluggishProxy = await delayingProxy(sluggish.url, () => sluggishDelayMs);
  gateway = gatewayWith();
  served = await serve(gateway);
  openai = new OpenAI({ baseURL: served.url + '/v1', apiKey: 'sk-test', maxRetries: 0 });
});
afterAll(async () => {
  await served.close();
  await sluggishProxy.close();
  await Promise.all([quick.close(), sluggish.close()]);
});
beforeEach(() => {
  for (const fake of [quick, sluggish]) {
    fake.reset();
    // Back to the queue of replies (`reset` keeps a script set by `answerWith`).
    fake.answerWith(undefined as unknown as Parameters<FakeUpstream['answerWith']>[0]);
  }
  sluggishDelayMs = 0;
  gateway.options.policies.health.clear();
});

/**
 * Sends requests one after another until the last `window` served satisfy `done`, for at most
 * `withinMs`; returns the shares of that last window (or of the last one tried).
 */
async function shareUntil(done: (sluggishShare: number) => boolean, window = 40, withinMs = 10_000): Promise<number> {
  const served: string[] = [];
  const deadline = Date.now() + withinMs;
  let share = Number.NaN;
  while (Date.now() < deadline) {
    served.push((await ask()).route.deployment!);
    if (served.length < window) continue;
    const last = served.slice(-window);
    share = last.filter((id) => id === 'sluggish').length / window;
    if (done(share)) return share;
  }
  return share;
}

describe('latency-aware choice', () => {
  it('a deployment whose first byte comes late loses most traffic within seconds, and regains it once it is fast again', async () => {
    sluggishDelayMs = 400;
    const slowShare = await shareUntil((share) => share <= 0.1);
    expect(slowShare).toBeLessThanOrEqual(0.1);
    sluggishDelayMs = 0;
    const recoveredShare = await shareUntil((share) => share >= 0.3);
    expect(recoveredShare).toBeGreaterThanOrEqual(0.3);
  });

  it('a sticky prompt_cache_key stays on its deployment even when it is the slower one', async () => {
    sluggishDelayMs = 100;
    const key = keyPinnedTo('sluggish');
    for (let i = 0; i < 5; i++) expect((await ask({ promptCacheKey: key })).route).toMatchObject({ deployment: 'sluggish', reason: 'sticky' });
  });
});

describe('circuit breaker', () => {
  it('a failing deployment opens, gets one half-open probe after its open time, and closes on the probe’s success', async () => {
    const health = gateway.options.policies.health;
    let failing = true;
    sluggish.answerWith(() => (failing ? { error: { status: 500, message: 'internal', type: 'server_error' } } : { text: ['probe ok'] }));
    const key = keyPinnedTo('sluggish');
    for (let i = 0; i < 2; i++) expect((await ask({ promptCacheKey: key })).route).toMatchObject({ deployment: 'quick', reason: 'fallback', attempts: '2' });
    expect(health.snapshot()).toContainEqual({ deployment: 'sluggish', provider: 'sluggish', state: 'open' });
    // Open: not tried, even by the key pinned to it.
    const triedBefore = sluggish.requests.length;
    for (let i = 0; i < 5; i++) expect((await ask({ promptCacheKey: key })).route).toMatchObject({ deployment: 'quick', reason: 'sticky', attempts: '1' });
    expect(sluggish.requests.length).toBe(triedBefore);

    failing = false;
    await expect.poll(() => health.state(sluggishDeployment), { timeout: 5000, interval: 50 }).toBe('half_open');
    expect(await ask()).toMatchObject({ route: { deployment: 'sluggish', reason: 'probe', attempts: '1' }, text: 'probe ok' });
    // Closed; still `degraded` (scored worse) while its recent failures weigh on its error rate.
    expect(health.snapshot()).toContainEqual({ deployment: 'sluggish', provider: 'sluggish', state: 'degraded' });
    expect((await ask({ promptCacheKey: key })).route).toMatchObject({ deployment: 'sluggish', reason: 'sticky' });
  });

  it('lets one probe at a time through a half-open breaker; a probe whose client left frees the slot', async () => {
    const health = gateway.options.policies.health;
    sluggish.answerWith(() => ({ error: { status: 500, message: 'internal', type: 'server_error' } }));
    const key = keyPinnedTo('sluggish');
    for (let i = 0; i < 2; i++) await ask({ promptCacheKey: key });
    await expect.poll(() => health.state(sluggishDeployment), { timeout: 5000, interval: 50 }).toBe('half_open');
    // The probe hangs upstream: while it is out, every other request goes elsewhere.
    sluggish.answerWith(() => ({ hang: true }));
    const controller = new AbortController();
    const probe = openai.chat.completions.create({ model: 'duo', messages: [{ role: 'user', content: 'Hi' }] }, { signal: controller.signal });
    await expect.poll(() => sluggish.requests.length).toBe(3);
    const during = await Promise.all(Array.from({ length: 6 }, () => ask()));
    expect(during.map((answer) => answer.route.deployment)).toEqual(Array(6).fill('quick'));
    expect(sluggish.requests.length).toBe(3);
    controller.abort();
    await expect(probe).rejects.toThrow();
    await expect.poll(() => health.inFlight(sluggishDeployment)).toBe(0);
    // Still half-open, the slot free: the next request is a probe again.
    sluggish.answerWith(() => ({ text: ['back'] }));
    expect(await ask()).toMatchObject({ route: { deployment: 'sluggish', reason: 'probe' }, text: 'back' });
  });

  it('two gateways sharing a health bus: a deployment one of them opened is avoided by the other', async () => {
    const bus = new MemoryHealthBus();
    const first = gatewayWith({ healthBus: bus, instanceId: 'first' });
    const second = gatewayWith({ healthBus: bus, instanceId: 'second' });
    const [servedFirst, servedSecond] = await Promise.all([serve(first), serve(second)]);
    try {
      sluggish.answerWith(() => ({ error: { status: 503, message: 'overloaded', type: 'server_error' } }));
      const key = keyPinnedTo('sluggish');
      const client = (url: string) => new OpenAI({ baseURL: url + '/v1', apiKey: 'sk-test', maxRetries: 0 });
      for (let i = 0; i < 2; i++)
        await client(servedFirst.url).chat.completions.create({ model: 'duo', messages: [{ role: 'user', content: 'Hi' }], prompt_cache_key: key });
      expect(first.options.policies.health.isCooling(sluggishDeployment)).toBe(true);
      await expect.poll(() => second.options.policies.health.isCooling(sluggishDeployment)).toBe(true);
      const tried = sluggish.requests.length;
      const { response } = await client(servedSecond.url)
        .chat.completions.create({ model: 'duo', messages: [{ role: 'user', content: 'Hi' }], prompt_cache_key: key })
        .withResponse();
      expect(parseRoute(response.headers.get('x-infergate-route'))).toMatchObject({ deployment: 'quick', attempts: '1' });
      expect(sluggish.requests.length).toBe(tried);
    } finally {
      await Promise.all([servedFirst.close(), servedSecond.close()]);
    }
  });
});

describe('x-infergate-route-order', () => {
  it('price: the deployment whose upstream model is cheapest in the catalog goes first', async () => {
    for (let i = 0; i < 5; i++) expect((await ask({ order: 'price' })).route).toMatchObject({ deployment: 'sluggish', reason: 'price', order: 'price' });
  });

  it('configured: the first listed deployment goes first, whatever its latency', async () => {
    for (let i = 0; i < 5; i++)
      expect((await ask({ order: 'configured' })).route).toMatchObject({ deployment: 'quick', reason: 'configured', order: 'configured' });
  });

  it('an unknown order is a 400 naming the header, in the route’s error shape, before any upstream call', async () => {
    const response = await fetch(served.url + '/v1/chat/completions', {
      method: 'POST',
      headers: { authorization: 'Bearer sk-test', 'content-type': 'application/json', 'x-infergate-route-order': 'fastest' },
      body: JSON.stringify({ model: 'duo', messages: [{ role: 'user', content: 'Hi' }] }),
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as any).error).toMatchObject({ type: 'invalid_request_error', param: 'x-infergate-route-order' });
    const anthropic = await fetch(served.url + '/v1/messages', {
      method: 'POST',
      headers: { 'x-api-key': 'sk-test', 'anthropic-version': '2023-06-01', 'content-type': 'application/json', 'x-infergate-route-order': 'cheapest' },
      body: JSON.stringify({ model: 'duo', max_tokens: 16, messages: [{ role: 'user', content: 'Hi' }] }),
    });
    expect(anthropic.status).toBe(400);
    expect(await anthropic.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    expect(quick.requests.length + sluggish.requests.length).toBe(0);
  });
});

describe('x-infergate-route', () => {
  it('names the deployment on a JSON answer, a stream, a fallback and an error after every attempt', async () => {
    expect((await ask()).route).toMatchObject({ reason: 'p2c', order: 'latency', attempts: '1' });

    const { response: streamed, data: stream } = await openai.chat.completions
      .create({ model: 'duo', messages: [{ role: 'user', content: 'Hi' }], stream: true, prompt_cache_key: keyPinnedTo('quick') })
      .withResponse();
    for await (const _ of stream);
    expect(parseRoute(streamed.headers.get('x-infergate-route'))).toEqual({ deployment: 'quick', reason: 'sticky', order: 'latency', attempts: '1' });

    quick.reply({ error: { status: 502, message: 'bad gateway', type: 'server_error' } });
    expect((await ask({ order: 'configured' })).route).toEqual({ deployment: 'sluggish', reason: 'fallback', order: 'configured', attempts: '2' });

    gateway.options.policies.health.clear();
    quick.reply({ error: { status: 500, message: 'internal', type: 'server_error' } });
    sluggish.reply({ error: { status: 500, message: 'internal', type: 'server_error' } });
    const failed = await fetch(served.url + '/v1/chat/completions', {
      method: 'POST',
      headers: { authorization: 'Bearer sk-test', 'content-type': 'application/json', 'x-infergate-route-order': 'configured' },
      body: JSON.stringify({ model: 'duo', messages: [{ role: 'user', content: 'Hi' }] }),
    });
    expect(failed.status).toBe(500);
    expect(parseRoute(failed.headers.get('x-infergate-route'))).toEqual({ deployment: 'sluggish', reason: 'fallback', order: 'configured', attempts: '2' });
  });
});

describe('requests in flight', () => {
  const inFlight = () => gateway.options.policies.health.inFlight(quickDeployment) + gateway.options.policies.health.inFlight(sluggishDeployment);

  it('go back to 0 after answers, failures, and streams the client abandons midway', async () => {
    await ask();
    expect(inFlight()).toBe(0);
    quick.answerWith(() => ({ text: ['a', 'b', 'c', 'd'], stallAfter: 2 }));
    sluggish.answerWith(() => ({ text: ['a', 'b', 'c', 'd'], stallAfter: 2 }));
    for (let i = 0; i < 4; i++) {
      const controller = new AbortController();
      const stream = await openai.chat.completions.create(
        { model: 'duo', messages: [{ role: 'user', content: 'Hi' }], stream: true },
        { signal: controller.signal },
      );
      for await (const _ of stream) break;
      expect(inFlight()).toBe(1);
      controller.abort();
    }
    await expect.poll(inFlight, { timeout: 5000 }).toBe(0);

    // The same on a translated stream (an Anthropic client on the OpenAI deployments).
    const anthropic = new Anthropic({ baseURL: served.url, apiKey: 'sk-test', maxRetries: 0 });
    for (let i = 0; i < 3; i++) {
      const controller = new AbortController();
      const stream = await anthropic.messages.create(
        { model: 'duo', max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }], stream: true },
        { signal: controller.signal },
      );
      for await (const _ of stream) break;
      expect(inFlight()).toBe(1);
      controller.abort();
    }
    await expect.poll(inFlight, { timeout: 5000 }).toBe(0);

    quick.answerWith(() => ({ error: { status: 500, message: 'internal', type: 'server_error' } }));
    sluggish.answerWith(() => ({ error: { status: 500, message: 'internal', type: 'server_error' } }));
    await expect(ask()).rejects.toMatchObject({ status: 500 });
    expect(inFlight()).toBe(0);
  });

  it('a client that leaves before the first byte releases its attempt too', async () => {
    quick.answerWith(() => ({ hang: true }));
    sluggish.answerWith(() => ({ hang: true }));
    const controller = new AbortController();
    const pending = openai.chat.completions.create({ model: 'duo', messages: [{ role: 'user', content: 'Hi' }] }, { signal: controller.signal });
    await expect.poll(inFlight).toBe(1);
    controller.abort();
    await expect(pending).rejects.toThrow();
    await expect.poll(inFlight, { timeout: 5000 }).toBe(0);
  });
});
