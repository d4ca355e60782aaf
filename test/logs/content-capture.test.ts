import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createGateway } from '../../src/gateway.js';
import { CUT_MARKER, capped } from '../../src/logs/content-capture.js';
import { MemoryRequestLog } from '../../src/logs/memory-request-log.js';
import { rowOf } from '../../src/logs/request-log.js';
import type { UsageEvent } from '../../src/options.js';
import { type Harness, startHarness, type UpstreamKind } from '../upstreams/harness.js';

/** The opt-in capture of prompts and answers (`captureContent`) into usage events and request-log rows. */

const SECRET = 'sk-proj-abcdefghijklmnopqrstuvwxyz0123456789';
const weather = { name: 'get_weather', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } } } };

async function lastEvent(h: Harness, count = 1): Promise<UsageEvent> {
  await vi.waitFor(() => expect(h.usage).toHaveLength(count));
  return h.usage.at(-1)!;
}

function post(h: Harness, path: string, body: string): Promise<Response> {
  const headers = { authorization: 'Bearer sk-test', 'content-type': 'application/json', 'anthropic-version': '2023-06-01' };
  return fetch(h.url + path, { method: 'POST', headers, body });
}

describe('captureContent off (the default)', () => {
  let h: Harness;
  const log = new MemoryRequestLog();
  beforeAll(async () => {
    h = await startHarness({ gateway: { requestLog: log } });
  });
  afterAll(() => h.close());

  it('puts no prompt and no answer in usage events or rows, JSON or stream', async () => {
    h.upstreams.chat.fake.reply({ text: ['Hello'] }, { text: ['Hello'] });
    h.upstreams.anthropic.fake.reply({ text: ['Hello'] });
    await (await post(h, '/v1/chat/completions', JSON.stringify({ model: 'gpt-chat', messages: [{ role: 'user', content: SECRET }] }))).text();
    const stream = await h.openai.chat.completions.create({ model: 'gpt-chat', stream: true, messages: [{ role: 'user', content: 'Hi' }] });
    for await (const _ of stream);
    await h.anthropic.messages.stream({ model: 'claude', max_tokens: 50, messages: [{ role: 'user', content: 'Hi' }] }).finalMessage();

    await vi.waitFor(() => expect(h.usage).toHaveLength(3));
    for (const event of h.usage) {
      expect(event).not.toHaveProperty('content');
      expect(rowOf(event)).not.toHaveProperty('content');
      expect(JSON.stringify(rowOf(event))).not.toContain('Hello');
    }
    await vi.waitFor(() => expect(log.sinkStats().written).toBe(3));
    const stored = JSON.stringify((await log.query({ limit: 10 })).data);
    expect(stored).not.toContain('content');
    expect(stored).not.toContain('Hello');
    expect(stored).not.toContain(SECRET);
  });
});

describe('captureContent on', () => {
  let h: Harness;
  const log = new MemoryRequestLog();
  beforeAll(async () => {
    h = await startHarness({ gateway: { captureContent: true, requestLog: log } });
  });
  afterAll(() => h.close());
  beforeEach(() => h.reset());

  // `chat` serves Chat by passthrough and Messages translated; `anthropic` the other way round.
  describe.each<UpstreamKind>(['chat', 'anthropic'])('through the %s upstream', (kind) => {
    const model = () => h.upstreams[kind].model;

    it('keeps a Chat JSON request as sent and the answer as the client got it', async () => {
      h.upstreams[kind].fake.reply({ text: ['Hello', ' world'] });
      const body = JSON.stringify({ model: model(), messages: [{ role: 'user', content: 'Say hello' }], max_tokens: 20 });
      const answer = await (await post(h, '/v1/chat/completions', body)).text();

      const event = await lastEvent(h);
      expect(event.content).toEqual({ request: body, response: answer });
      expect(JSON.parse(answer).choices[0].message.content).toBe('Hello world');
      await vi.waitFor(async () => expect((await log.get(event.requestId))?.content).toEqual({ request: body, response: answer }));
    });

    it('assembles a Chat stream answer', async () => {
      h.upstreams[kind].fake.reply({ text: ['Hel', 'lo', ' world'] });
      const stream = await h.openai.chat.completions.create({ model: model(), stream: true, messages: [{ role: 'user', content: 'Say hello' }] });
      let text = '';
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
      expect(text).toBe('Hello world');

      const event = await lastEvent(h);
      expect(event.content?.response).toBe('Hello world');
      expect(JSON.parse(event.content!.request!)).toMatchObject({ model: model(), stream: true, messages: [{ role: 'user', content: 'Say hello' }] });
    });

    it('assembles a Messages stream answer with its tool call', async () => {
      h.upstreams[kind].fake.reply({ text: ['Let me check.'], toolCalls: [{ name: 'get_weather', args: ['{"city":', '"Paris"}'] }] });
      const message = await h.anthropic.messages
        .stream({ model: model(), max_tokens: 100, tools: [weather], messages: [{ role: 'user', content: 'Weather in Paris?' }] })
        .finalMessage();
      expect(message.content.map((block) => block.type)).toEqual(['text', 'tool_use']);

      const event = await lastEvent(h);
      expect(event.content?.response).toBe('Let me check.\n[tool_call get_weather] {"city":"Paris"}');
      expect(JSON.parse(event.content!.request!).messages).toEqual([{ role: 'user', content: 'Weather in Paris?' }]);
    });
  });

  it('scrubs a credential from the prompt and from the answer', async () => {
    h.upstreams.anthropic.fake.reply({ text: [`Your key is ${SECRET}.`] });
    const body = JSON.stringify({ model: 'claude', max_tokens: 50, messages: [{ role: 'user', content: `My key is ${SECRET}, keep it` }] });
    const answer = await (await post(h, '/v1/messages', body)).text();
    expect(answer).toContain(SECRET);

    const { content } = await lastEvent(h);
    expect(content?.request).not.toContain(SECRET);
    expect(content?.request).toContain('My key is sk-[redacted], keep it');
    expect(content?.response).not.toContain(SECRET);
    expect(content?.response).toContain('Your key is sk-[redacted].');
  });

  it('keeps the prompt of a request that failed, and no answer', async () => {
    h.upstreams.chat.fake.reply({ error: { status: 400, message: 'Bad thing', type: 'invalid_request_error' } });
    const body = JSON.stringify({ model: 'gpt-chat', messages: [{ role: 'user', content: 'Hi' }] });
    expect((await post(h, '/v1/chat/completions', body)).status).toBe(400);

    const event = await lastEvent(h);
    expect(event.status).toBe('error');
    expect(event.content).toEqual({ request: body });
  });
});

describe('captureContent with a cap', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ gateway: { captureContent: { maxBytes: 1024 } } });
  });
  afterAll(() => h.close());

  it('cuts the prompt and a streamed answer at the cap, with the marker', async () => {
    const long = 'é'.repeat(3000);
    h.upstreams.anthropic.fake.reply({ text: Array.from({ length: 40 }, () => 'word '.repeat(20)) });
    const stream = await h.openai.chat.completions.create({ model: 'claude', stream: true, messages: [{ role: 'user', content: long }] });
    let received = '';
    for await (const chunk of stream) received += chunk.choices[0]?.delta.content ?? '';
    expect(received).toHaveLength(4000);

    const { content } = await lastEvent(h);
    for (const text of [content!.request!, content!.response!]) {
      expect(text.endsWith(CUT_MARKER)).toBe(true);
      expect(Buffer.byteLength(text)).toBeLessThanOrEqual(1024);
      expect(Buffer.byteLength(text)).toBeGreaterThan(1000);
    }
    expect(content!.response!.startsWith('word word')).toBe(true);
  });
});

describe('capped', () => {
  it('keeps a short text whole', () => {
    expect(capped('hello', 64)).toBe('hello');
  });

  it('never splits a character, and counts the marker in the cap', () => {
    const text = capped('€'.repeat(100), 64);
    expect(text).toBe('€'.repeat(Math.floor((64 - Buffer.byteLength(CUT_MARKER)) / 3)) + CUT_MARKER);
    expect(text).not.toContain('\uFFFD');
  });

  it('scrubs a credential that straddles the cut', () => {
    const text = capped('x'.repeat(60) + SECRET, 80);
    expect(text).not.toContain('sk-proj-abc');
    expect(text.endsWith(CUT_MARKER)).toBe(true);
  });
});

describe('captureContent option', () => {
  it('refuses a cap that is not a size', () => {
    expect(() => createGateway({ keys: [{ key: 'sk-test' }], captureContent: { maxBytes: 0 } })).toThrow('options.captureContent.maxBytes');
  });
});

describe('captureContent with an input guardrail that masks', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({
      gateway: { captureContent: true, policies: { guardrails: [{ type: 'pii', action: 'mask', phase: 'input', categories: ['email'] }] } },
    });
  });
  afterAll(() => h.close());

  it('keeps the prompt as it went upstream, masked, never the value', async () => {
    h.upstreams.chat.fake.reply({ text: ['ok'] });
    const body = JSON.stringify({ model: h.upstreams.chat.model, messages: [{ role: 'user', content: 'Mail jane.doe@example.com today' }] });
    expect((await post(h, '/v1/chat/completions', body)).status).toBe(200);
    const event = await lastEvent(h);
    expect(event.content?.request).toContain('Mail [REDACTED:email] today');
    expect(JSON.stringify(event)).not.toContain('jane.doe@example.com');
    expect(h.upstreams.chat.fake.last().body.messages[0].content).toBe('Mail [REDACTED:email] today');
  });
});
