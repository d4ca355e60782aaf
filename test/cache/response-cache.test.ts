import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { bodyOf, post, startCacheHarness, type CacheHarness } from './cache-harness.js';
import { withinOneMinute } from '../helpers/rate-window.js';

let harness: CacheHarness;
beforeAll(async () => {
  harness = await startCacheHarness();
});
afterAll(() => harness.close());
beforeEach(() => harness.reset());

/** Sends the same Chat request twice; the second's cache header and the upstream calls made. */
async function twice(first: Record<string, unknown>, second = first, headers: Record<string, string> = {}, key = 'sk-a') {
  const a = await post(harness, 'chat', first, headers, key);
  await a.text();
  const b = await post(harness, 'chat', second, headers, key);
  await b.text();
  return { first: a.headers.get('x-infergate-cache'), second: b.headers.get('x-infergate-cache'), calls: harness.fakes.chat.accepted().length };
}

describe('response cache: hit and miss', () => {
  it('answers the second identical Chat request from the cache, with the original usage and a fresh id', async () => {
    harness.fakes.chat.reply({ text: ['Paris', ' is the capital.'], usage: { input: 20, output: 6 } });
    const first = await post(harness, 'chat', bodyOf('chat', 'chat', 'capital of France?'));
    expect(first.status).toBe(200);
    expect(first.headers.get('x-infergate-cache')).toBe('miss');
    const miss = await first.json();
    const second = await post(harness, 'chat', bodyOf('chat', 'chat', 'capital of France?'));
    expect(second.headers.get('x-infergate-cache')).toBe('hit');
    const hit = await second.json();
    expect(harness.fakes.chat.accepted()).toHaveLength(1);
    expect(hit.choices[0].message.content).toBe('Paris is the capital.');
    expect(hit.choices[0].finish_reason).toBe('stop');
    expect(hit.usage).toMatchObject({ prompt_tokens: 20, completion_tokens: 6, total_tokens: 26 });
    expect(hit.model).toBe('chat');
    expect(hit.id).toMatch(/^chatcmpl-/);
    expect(hit.id).not.toBe(miss.id);
  });

  it('marks the hit cached in its usage event: the original usage, no attempt, no cost', async () => {
    harness.fakes.anthropic.reply({ text: ['Bonjour.'], usage: { input: 40, output: 3, cachedRead: 10 } });
    await (await post(harness, 'messages', bodyOf('messages', 'anthropic', 'say hello in French'))).text();
    const hit = await post(harness, 'messages', bodyOf('messages', 'anthropic', 'say hello in French', { stream: true }));
    expect(hit.headers.get('x-infergate-cache')).toBe('hit');
    expect(await hit.text()).toContain('event: message_stop');
    const [miss, cached] = await harness.usageEvents(2);
    expect(miss).toMatchObject({ attempts: 1, status: 'ok', stream: false });
    expect(miss!.cached).toBeUndefined();
    expect(miss!.cost).toBe(43);
    expect(cached).toMatchObject({ cached: true, attempts: 0, status: 'ok', stream: true, cost: 0, costUsd: 0, model: 'anthropic', keyId: 'a' });
    expect(cached!.usage).toEqual({ input: miss!.usage.input, output: 3, cachedRead: 10, cacheWrite: miss!.usage.cacheWrite });
    expect(cached!.finishReason).toBe('stop');
    expect(cached!.responseId).toMatch(/^msg_/);
  });

  it('answers a Gemini client from the cache: a JSON miss replayed as an alt=sse stream', async () => {
    harness.fakes.chat.reply({ text: ['Rome.'], usage: { input: 9, output: 2 } });
    const gemini = (method: string) =>
      fetch(`${harness.url}/v1beta/models/chat:${method}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-goog-api-key': 'sk-a' },
        body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'capital of Italy?' }] }], generationConfig: { temperature: 0 } }),
      });
    const miss = await gemini('generateContent');
    expect(miss.headers.get('x-infergate-cache')).toBe('miss');
    expect((await miss.json()).candidates[0].content.parts[0].text).toBe('Rome.');
    const hit = await gemini('streamGenerateContent?alt=sse');
    expect(hit.headers.get('x-infergate-cache')).toBe('hit');
    expect(hit.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const chunks = (await hit.text())
      .split('\n\n')
      .filter((frame) => frame.startsWith('data: '))
      .map((frame) => JSON.parse(frame.slice(6)));
    expect(
      chunks
        .flatMap((chunk) => chunk.candidates?.[0]?.content?.parts ?? [])
        .map((part: { text?: string }) => part.text)
        .join(''),
    ).toBe('Rome.');
    expect(chunks.at(-1).candidates[0].finishReason).toBe('STOP');
    expect(chunks.at(-1).usageMetadata).toMatchObject({ promptTokenCount: 9, candidatesTokenCount: 2 });
    expect(harness.fakes.chat.accepted()).toHaveLength(1);
  });
});

describe('response cache: what makes two requests the same', () => {
  it('ignores key order, stream options, user and metadata', async () => {
    harness.fakes.chat.reply({ text: ['Same.'] });
    const result = await twice(
      { model: 'chat', temperature: 0, messages: [{ role: 'user', content: 'same?' }], max_completion_tokens: 50 },
      { max_completion_tokens: 50, messages: [{ content: 'same?', role: 'user' }], temperature: 0, model: 'chat', user: 'someone', metadata: { run: '2' } },
    );
    expect(result).toEqual({ first: 'miss', second: 'hit', calls: 1 });
  });

  it('tells apart requests that differ in a field that changes the answer', async () => {
    const base = bodyOf('chat', 'chat', 'differ?');
    expect(await twice(base, { ...base, max_completion_tokens: 10 })).toEqual({ first: 'miss', second: 'miss', calls: 2 });
  });

  it('keeps each key apart: another key with the same request misses, the first key still hits', async () => {
    const body = bodyOf('chat', 'chat', 'scoped?');
    await (await post(harness, 'chat', body, {}, 'sk-a')).text();
    const other = await post(harness, 'chat', body, {}, 'sk-b');
    expect(other.headers.get('x-infergate-cache')).toBe('miss');
    await other.text();
    const again = await post(harness, 'chat', body, {}, 'sk-a');
    expect(again.headers.get('x-infergate-cache')).toBe('hit');
    await again.text();
    expect(harness.fakes.chat.accepted()).toHaveLength(2);
    // The key itself is never part of a store key; its id is the namespace.
    expect([...harness.store.keys()].every((key) => !key.includes('sk-'))).toBe(true);
  });
});

describe('response cache: what is never cached', () => {
  it('a request that samples: temperature above 0, or left out (default 1)', async () => {
    const { temperature: _zero, ...unset } = bodyOf('chat', 'chat', 'sampled?');
    expect(await twice(unset)).toEqual({ first: 'miss', second: 'miss', calls: 2 });
    expect(await twice(bodyOf('chat', 'chat', 'sampled?', { temperature: 0.7 }))).toEqual({ first: 'miss', second: 'miss', calls: 4 });
  });

  it('unless the model allows sampling', async () => {
    expect(await twice(bodyOf('chat', 'chat-sampling', 'sampled?', { temperature: 0.7 }))).toEqual({ first: 'miss', second: 'hit', calls: 1 });
  });

  it('a request with tools the upstream runs (web search; function tools are cached, replay.test.ts)', async () => {
    const hosted = bodyOf('responses', 'responses', 'news today?', { tools: [{ type: 'web_search' }] });
    for (let i = 0; i < 2; i++) {
      const response = await post(harness, 'responses', hosted);
      expect(response.status).toBe(200);
      expect(response.headers.get('x-infergate-cache')).toBe('miss');
      await response.text();
    }
    expect(harness.fakes.responses.accepted()).toHaveLength(2);
    expect(await twice(bodyOf('chat', 'chat', 'search?', { web_search_options: {} }))).toEqual({ first: 'miss', second: 'miss', calls: 2 });
  });

  it('a Responses request the gateway keeps: store left out where responses are kept', async () => {
    expect(harness.gateway.options.responseStore).toBeDefined();
    const { store: _store, ...stored } = bodyOf('responses', 'responses', 'kept?');
    for (let i = 0; i < 2; i++) {
      const response = await post(harness, 'responses', stored);
      expect(response.headers.get('x-infergate-cache')).toBe('miss');
      await response.text();
    }
    expect(harness.fakes.responses.accepted()).toHaveLength(2);
  });

  it('an upstream error, and the next request still goes upstream', async () => {
    harness.fakes.chat.reply({ error: { status: 400, message: 'Invalid prompt.', type: 'invalid_request_error' } }, { text: ['Fine.'] });
    const body = bodyOf('chat', 'chat', 'error first?');
    const failed = await post(harness, 'chat', body);
    expect(failed.status).toBe(400);
    await failed.text();
    const ok = await post(harness, 'chat', body);
    expect(ok.headers.get('x-infergate-cache')).toBe('miss');
    expect((await ok.json()).choices[0].message.content).toBe('Fine.');
    const hit = await post(harness, 'chat', body);
    expect(hit.headers.get('x-infergate-cache')).toBe('hit');
    expect((await hit.json()).choices[0].message.content).toBe('Fine.');
    expect(harness.fakes.chat.accepted()).toHaveLength(2);
  });

  it.each([
    ['cut mid-stream', { cutAfter: 2 }],
    ['an in-stream error', { streamError: { after: 2, status: 500, message: 'overloaded', type: 'server_error' } }],
  ])('a stream that did not complete (%s), passed through or translated', async (_name, failure) => {
    for (const [protocol, model] of [
      ['chat', 'chat'],
      ['messages', 'chat'],
    ] as const) {
      const upstream = harness.fakes.chat;
      upstream.reset();
      upstream.reply({ text: ['one', ' two', ' three', ' four'], ...failure }, { text: ['Whole.'] });
      const body = bodyOf(protocol, model, `cut? ${_name}`, { stream: true });
      const cut = await post(harness, protocol, body);
      expect(cut.headers.get('x-infergate-cache')).toBe('miss');
      expect(await cut.text()).toMatch(protocol === 'chat' ? /"error"/ : /event: error/);
      const whole = await post(harness, protocol, body);
      expect(whole.headers.get('x-infergate-cache')).toBe('miss');
      expect(await whole.text()).toContain('Whole.');
      const hit = await post(harness, protocol, { ...body, stream: false });
      expect(hit.headers.get('x-infergate-cache')).toBe('hit');
      expect(JSON.stringify(await hit.json())).toContain('Whole.');
      expect(upstream.accepted()).toHaveLength(2);
    }
  });

  it('a stream the client left mid-way, passed through or translated', async () => {
    for (const protocol of ['chat', 'messages'] as const) {
      harness.reset();
      const upstream = harness.fakes.chat;
      upstream.reply({ text: ['one', ' two', ' three'], stallAfter: 2 }, { text: ['Whole.'] });
      const body = bodyOf(protocol, 'chat', 'left by the client', { stream: true });
      const left = await post(harness, protocol, body);
      expect(left.headers.get('x-infergate-cache')).toBe('miss');
      const reader = left.body!.getReader();
      await reader.read();
      await reader.cancel();
      // The request has ended (cancelled) before the same one is asked again.
      await expect.poll(() => harness.usage.length).toBe(1);
      expect(harness.usage[0]).toMatchObject({ cancelled: true });
      const whole = await post(harness, protocol, body);
      expect(whole.headers.get('x-infergate-cache')).toBe('miss');
      expect(await whole.text()).toContain('Whole.');
      const hit = await post(harness, protocol, body);
      expect(hit.headers.get('x-infergate-cache')).toBe('hit');
      expect(await hit.text()).toContain('Whole.');
      expect(upstream.accepted()).toHaveLength(2);
    }
  });
});

describe('response cache: who opts in', () => {
  it('x-infergate-cache: on caches a model without cache config; off skips a cached model', async () => {
    expect(await twice(bodyOf('chat', 'chat-plain', 'opt in?'), undefined, { 'x-infergate-cache': 'on' })).toEqual({ first: 'miss', second: 'hit', calls: 1 });
    harness.fakes.chat.reset();
    expect(await twice(bodyOf('chat', 'chat', 'opt out?'), undefined, { 'x-infergate-cache': 'off' })).toEqual({ first: 'miss', second: 'miss', calls: 2 });
    // Off neither read nor wrote: the same request without the header is still a miss.
    const after = await post(harness, 'chat', bodyOf('chat', 'chat', 'opt out?'));
    expect(after.headers.get('x-infergate-cache')).toBe('miss');
    await after.text();
  });

  it('a model without cache config is not cached by default', async () => {
    expect(await twice(bodyOf('chat', 'chat-plain', 'plain?'))).toEqual({ first: 'miss', second: 'miss', calls: 2 });
  });

  it("a key with cache: false is never cached, whatever the request's header says", async () => {
    expect(await twice(bodyOf('chat', 'chat', 'never?'), undefined, { 'x-infergate-cache': 'on' }, 'sk-never')).toEqual({
      first: 'miss',
      second: 'miss',
      calls: 2,
    });
  });

  it('another header value is a 400 naming the header', async () => {
    const response = await post(harness, 'chat', bodyOf('chat', 'chat', 'bad header?'), { 'x-infergate-cache': 'maybe' });
    expect(response.status).toBe(400);
    expect((await response.json()).error).toMatchObject({ param: 'x-infergate-cache', code: 'invalid_value' });
    expect(harness.fakes.chat.accepted()).toHaveLength(0);
  });
});

describe('response cache: hits still pass the key checks', () => {
  it("a hit counts against the key's requests per minute", async () => {
    const body = bodyOf('chat', 'chat', 'limited?');
    await withinOneMinute();
    expect((await post(harness, 'chat', body, {}, 'sk-limited')).headers.get('x-infergate-cache')).toBe('miss');
    expect((await post(harness, 'chat', body, {}, 'sk-limited')).headers.get('x-infergate-cache')).toBe('hit');
    const third = await post(harness, 'chat', body, {}, 'sk-limited');
    expect(third.status).toBe(429);
    expect((await third.json()).error.code).toBe('rate_limit_exceeded');
  });

  it("a model outside the key's scope is refused, cached or not", async () => {
    await (await post(harness, 'chat', bodyOf('chat', 'chat', 'scope?'), {}, 'sk-a')).text();
    const response = await post(harness, 'chat', bodyOf('chat', 'chat', 'scope?'), {}, 'sk-scoped');
    expect(response.status).toBe(404);
    await response.text();
  });
});

describe('response cache: time to live and size', () => {
  it('an answer expires after ttlSeconds (the injected clock)', async () => {
    const body = bodyOf('chat', 'chat', 'expires?');
    expect(await twice(body)).toEqual({ first: 'miss', second: 'hit', calls: 1 });
    harness.clock.now += 59_000;
    expect((await post(harness, 'chat', body)).headers.get('x-infergate-cache')).toBe('hit');
    harness.clock.now += 2_000;
    expect((await post(harness, 'chat', body)).headers.get('x-infergate-cache')).toBe('miss');
    expect(harness.fakes.chat.accepted()).toHaveLength(2);
  });
});

describe('response cache: off', () => {
  it('sends no x-infergate-cache header when the gateway has no responseCache', async () => {
    const { createGateway } = await import('../../src/gateway.js');
    const gateway = createGateway({ keys: [{ key: 'sk-a' }], logger: false });
    const response = await gateway.fetch('http://gateway.test/v1/chat/completions', {
      method: 'POST',
      headers: { authorization: 'Bearer sk-a', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'local-chat', messages: [{ role: 'user', content: 'hi' }], temperature: 0 }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-infergate-cache')).toBeNull();
    await response.text();
  });
});
