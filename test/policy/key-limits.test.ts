import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { createGateway, type Gateway } from '../../src/gateway.js';
import type { GatewayOptions } from '../../src/options.js';
import type { UsageEvent } from '../../src/policy/events.js';
import { MemoryLimitEngine } from '../../src/policy/memory-limit-engine.js';
import { createOpenAIProvider } from '../../src/providers/openai/openai-provider.js';
import { startFakeOpenAI } from '../fakes/fake-openai.js';
import type { FakeUpstream } from '../fakes/fake-server.js';
import { serve, type Served } from '../helpers/serve.js';
import { withinOneMinute } from '../helpers/rate-window.js';

/**
 * Per-key limits and quota through the gateway: checked before any upstream call, answered as
 * 429s clients know how to follow (retry-after, x-ratelimit-*, x-should-retry on quota).
 */
let served: Served | undefined;
let gateway: Gateway | undefined;
let upstream: FakeUpstream | undefined;
afterEach(async () => {
  await served?.close();
  await upstream?.close();
  await Promise.all(Object.values(gateway?.options.providers ?? {}).map((provider) => provider.close?.()));
  served = gateway = upstream = undefined;
});

async function start(options: Partial<GatewayOptions>): Promise<{ url: string; usage: UsageEvent[] }> {
  const usage: UsageEvent[] = [];
  upstream = await startFakeOpenAI({ endpoints: ['chat'] });
  gateway = createGateway({
    keys: [{ key: 'sk-test', id: 'team-a' }],
    providers: { openai: createOpenAIProvider({ baseURL: upstream.url + '/v1', apiKey: 'up-key', responses: false }) },
    models: [{ id: 'gpt', provider: 'openai', upstreamModel: 'gpt-4.1' }],
    logger: false,
    hooks: { onUsage: (event) => void usage.push(event) },
    ...options,
  });
  served = await serve(gateway);
  return { url: served.url, usage };
}

function chat(url: string, key = 'sk-test', extra: Record<string, unknown> = {}): Promise<Response> {
  return fetch(url + '/v1/chat/completions', {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt', messages: [{ role: 'user', content: 'Hi' }], ...extra }),
  });
}

describe('requests per minute', () => {
  it('refuses the request over the limit before the upstream, with retry-after and x-ratelimit-* headers', async () => {
    await withinOneMinute();
    const { url } = await start({ policies: { limits: { requestsPerMinute: 2 } } });
    const first = await chat(url);
    expect(first.status).toBe(200);
    expect(first.headers.get('x-ratelimit-limit-requests')).toBe('2');
    expect(first.headers.get('x-ratelimit-remaining-requests')).toBe('1');
    expect(first.headers.get('x-ratelimit-reset-requests')).toMatch(/^\d+s$/);
    expect((await chat(url)).status).toBe(200);
    const refused = await chat(url);
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(refused.headers.get('x-ratelimit-remaining-requests')).toBe('0');
    expect(await refused.json()).toEqual({
      error: { message: expect.stringContaining('requests per minute'), type: 'rate_limit_exceeded', param: null, code: 'rate_limit_exceeded' },
    });
    expect(upstream!.accepted()).toHaveLength(2);
  });

  it('a limit on the key record overrides the default', async () => {
    await withinOneMinute();
    const { url } = await start({
      keys: [
        { key: 'sk-test', id: 'team-a' },
        { key: 'sk-vip', id: 'vip', limits: { requestsPerMinute: 3 } },
      ],
      policies: { limits: { requestsPerMinute: 1 } },
    });
    expect((await chat(url)).status).toBe(200);
    expect((await chat(url)).status).toBe(429);
    for (let i = 0; i < 3; i++) expect((await chat(url, 'sk-vip')).status).toBe(200);
    expect((await chat(url, 'sk-vip')).status).toBe(429);
  });

  it('the official SDK honours the retry-after: its retry lands after the window and succeeds', async () => {
    const windowMs = 2000;
    const { url } = await start({ policies: { limits: { requestsPerMinute: 1 }, limitEngine: new MemoryLimitEngine({ windowMs }) } });
    // Start right after a window boundary so the whole test runs inside one window.
    await new Promise((resolve) => setTimeout(resolve, windowMs - (Date.now() % windowMs) + 20));
    const openai = new OpenAI({ baseURL: url + '/v1', apiKey: 'sk-test', maxRetries: 2 });
    await openai.chat.completions.create({ model: 'gpt', messages: [{ role: 'user', content: 'first' }] });
    const windowEnd = Math.ceil(Date.now() / windowMs) * windowMs;
    const completion = await openai.chat.completions.create({ model: 'gpt', messages: [{ role: 'user', content: 'second' }] });
    expect(completion.choices[0]!.message.content).toBeTruthy();
    const accepted = upstream!.accepted();
    expect(accepted).toHaveLength(2);
    expect(accepted[1]!.receivedAt).toBeGreaterThanOrEqual(windowEnd);
  });
});

describe('concurrent requests', () => {
  it('a key with one slot gets 429 while its stream runs, and a slot again once it ended', async () => {
    const { url } = await start({ policies: { limits: { concurrentRequests: 1 } } });
    upstream!.reply({ text: ['Once', ' upon', ' a time'], stallAfter: 2 });
    const controller = new AbortController();
    const streaming = await chat(url, 'sk-test', { stream: true });
    void controller;
    expect(streaming.status).toBe(200);
    const reader = streaming.body!.getReader();
    await reader.read();
    const refused = await chat(url);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(((await refused.json()) as any).error.message).toMatch(/concurrent/);
    await reader.cancel();
    await expect.poll(async () => (await chat(url)).status, { timeout: 3000 }).toBe(200);
  });
});

describe('quota', () => {
  it('a key whose balance ran out gets 429 insufficient_quota with x-should-retry: false, and the SDK does not retry', async () => {
    const { url } = await start({ keys: [{ key: 'sk-test', id: 'team-a', balance: 30 }] });
    upstream!.reply({ text: ['ok'], usage: { input: 20, output: 15 } });
    expect((await chat(url)).status).toBe(200);
    // The balance is charged after the request: 30 - 35 tokens < 0.
    await expect.poll(async () => (await chat(url)).status).toBe(429);
    const refused = await chat(url);
    expect(refused.headers.get('x-should-retry')).toBe('false');
    expect(refused.headers.get('retry-after')).toBeTruthy();
    expect(((await refused.json()) as any).error).toMatchObject({ type: 'insufficient_quota', code: 'insufficient_quota' });

    const openai = new OpenAI({ baseURL: url + '/v1', apiKey: 'sk-test', maxRetries: 3 });
    const before = upstream!.requests.length;
    await expect(openai.chat.completions.create({ model: 'gpt', messages: [{ role: 'user', content: 'Hi' }] })).rejects.toMatchObject({
      status: 429,
      code: 'insufficient_quota',
    });
    expect(upstream!.requests.length).toBe(before);
  });

  it('an engine-counted quota stops the key once spent, counting a stream the client cut for what it produced', async () => {
    const { url, usage } = await start({ policies: { limits: { quota: 100 } } });
    upstream!.reply({ text: ['Once', ' upon', ' a time'], usage: { input: 40, output: 30 }, stallAfter: 3 });
    const streaming = await chat(url, 'sk-test', { stream: true, stream_options: { include_usage: true } });
    const reader = streaming.body!.getReader();
    await reader.read();
    await reader.cancel();
    await expect.poll(() => usage.length).toBe(1);
    expect(usage[0]).toMatchObject({ status: 'error', cancelled: true });
    upstream!.reply({ text: ['ok'], usage: { input: 60, output: 40 } });
    expect((await chat(url)).status).toBe(200);
    await expect.poll(() => usage.length).toBe(2);
    expect(usage[1]).toMatchObject({ cost: 100 });
    await expect.poll(async () => (await chat(url)).status).toBe(429);
    expect(await gateway!.options.policies.limitEngine.spent('team-a')).toBeGreaterThanOrEqual(100);
  });

  it('a Chat stream without include_usage is still charged, and the client does not get the usage chunk it did not ask for', async () => {
    const { url, usage } = await start({});
    upstream!.reply({ text: ['Hello', ' there'], usage: { input: 12, output: 5 } });
    const response = await chat(url, 'sk-test', { stream: true });
    const text = await response.text();
    expect(text).toContain('Hello');
    expect(text).toContain('data: [DONE]');
    expect(text).not.toContain('"usage"');
    expect(upstream!.last().body.stream_options).toEqual({ include_usage: true });
    await expect.poll(() => usage.length).toBe(1);
    expect(usage[0]).toMatchObject({ status: 'ok', usage: { input: 12, output: 5 }, cost: 17 });
  });
});

describe('when the limit engine fails', () => {
  const broken = { admit: () => Promise.reject(new Error('connect ECONNREFUSED')), settle: () => Promise.resolve(), spent: () => Promise.resolve(0) };

  it('fails open by default: the request is served and the failure logged', async () => {
    const logged: string[] = [];
    const { url } = await start({
      policies: { limits: { requestsPerMinute: 1 }, limitEngine: broken },
      logger: { info() {}, warn() {}, error: (message) => void logged.push(message) },
    });
    expect((await chat(url)).status).toBe(200);
    expect(logged).toContain('limit engine unavailable');
  });

  it('fails closed on request: 503 with retry-after, never a crash', async () => {
    const { url } = await start({ policies: { limits: { requestsPerMinute: 1 }, limitEngine: broken, whenLimitsUnavailable: 'closed' } });
    const response = await chat(url);
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('1');
    expect(((await response.json()) as any).error.code).toBe('limits_unavailable');
    expect(upstream!.requests).toHaveLength(0);
  });
});
