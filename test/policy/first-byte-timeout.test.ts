import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createGateway, type Gateway } from '../../src/gateway.js';
import type { AttemptEvent, UsageEvent } from '../../src/policy/events.js';
import { createAnthropicProvider } from '../../src/providers/anthropic/anthropic-provider.js';
import { createGeminiProvider } from '../../src/providers/gemini/gemini-provider.js';
import { createOpenAIProvider } from '../../src/providers/openai/openai-provider.js';
import { startFakeAnthropic } from '../fakes/fake-anthropic.js';
import { startFakeGemini } from '../fakes/fake-gemini.js';
import { startFakeOpenAI } from '../fakes/fake-openai.js';
import type { FakeUpstream, RecordedRequest, Reply } from '../fakes/fake-server.js';
import { serve, type Served } from '../helpers/serve.js';

/**
 * The first-byte timeout through the whole gateway: pairs of strict fakes serve one model each,
 * one of them slow to start its answer (far past the 400 ms budget, until the gateway hangs up),
 * and the client must get one clean answer from the other, or a 504 in its own error shape.
 */
const BUDGET_MS = 400;
/** Far past the budget: a slow attempt that is not cancelled shows as a test that fails, not one that waits. */
const SLOW_MS = 5000;

let gpt: [FakeUpstream, FakeUpstream];
let claude: [FakeUpstream, FakeUpstream];
let gemini: [FakeUpstream, FakeUpstream];
let gateway: Gateway;
let served: Served;
let openai: OpenAI;
let anthropic: Anthropic;
const attempts: AttemptEvent[] = [];
const usage: UsageEvent[] = [];

beforeAll(async () => {
  const [gpt1, gpt2, claude1, claude2, gemini1, gemini2] = await Promise.all([
    startFakeOpenAI({ endpoints: ['chat'] }),
    startFakeOpenAI({ endpoints: ['chat'] }),
    startFakeAnthropic(),
    startFakeAnthropic(),
    startFakeGemini(),
    startFakeGemini(),
  ]);
  gpt = [gpt1, gpt2];
  claude = [claude1, claude2];
  gemini = [gemini1, gemini2];
  const openaiAt = (fake: FakeUpstream) => createOpenAIProvider({ baseURL: fake.url + '/v1', apiKey: 'up-key', responses: false });
  const anthropicAt = (fake: FakeUpstream) => createAnthropicProvider({ baseURL: fake.url, apiKey: 'up-key' });
  const geminiAt = (fake: FakeUpstream) => createGeminiProvider({ baseURL: fake.url, apiKey: 'up-key' });
  gateway = createGateway({
    keys: [{ key: 'sk-test' }],
    providers: {
      gpt1: openaiAt(gpt1),
      gpt2: openaiAt(gpt2),
      claude1: anthropicAt(claude1),
      claude2: anthropicAt(claude2),
      gemini1: geminiAt(gemini1),
      gemini2: geminiAt(gemini2),
    },
    models: [
      // The policy's budget applies.
      {
        id: 'gpt',
        deployments: [
          { id: 'gpt-a', provider: 'gpt1', upstreamModel: 'gpt-4.1' },
          { id: 'gpt-b', provider: 'gpt2', upstreamModel: 'gpt-4.1' },
        ],
      },
      // The model's own.
      {
        id: 'claude',
        firstByteTimeoutMs: BUDGET_MS,
        deployments: [
          { id: 'claude-a', provider: 'claude1', upstreamModel: 'claude-sonnet-4-5' },
          { id: 'claude-b', provider: 'claude2', upstreamModel: 'claude-sonnet-4-5' },
        ],
      },
      {
        id: 'embed',
        kind: 'embedding',
        deployments: [
          { id: 'embed-a', provider: 'gemini1', upstreamModel: 'gemini-embedding-001' },
          { id: 'embed-b', provider: 'gemini2', upstreamModel: 'gemini-embedding-001' },
        ],
      },
      // 0 turns the policy's budget off for this model.
      { id: 'patient', provider: 'gpt1', upstreamModel: 'gpt-4.1', firstByteTimeoutMs: 0 },
    ],
    policies: { retry: { backoffMs: 10, firstByteTimeoutMs: BUDGET_MS, failuresBeforeCooldown: 1 } },
    logger: false,
    hooks: { onAttempt: (event) => void attempts.push(event), onUsage: (event) => void usage.push(event) },
  });
  served = await serve(gateway);
  openai = new OpenAI({ baseURL: served.url + '/v1', apiKey: 'sk-test', maxRetries: 0 });
  anthropic = new Anthropic({ baseURL: served.url, apiKey: 'sk-test', maxRetries: 0 });
});
afterAll(async () => {
  await served.close();
  await Promise.all([...gpt, ...claude, ...gemini].map((fake) => fake.close()));
  await Promise.all(Object.values(gateway.options.providers).map((provider) => provider.close?.()));
});
beforeEach(() => {
  for (const fake of [...gpt, ...claude, ...gemini]) fake.reset();
  attempts.length = 0;
  usage.length = 0;
  gateway.options.policies.health.clear();
});

/**
 * Both fakes of a pair answer `reply`, but the first request either gets (whichever deployment
 * the gateway tries first) starts its answer only after `slowMs`. Returns that request once made.
 */
function firstRequestSlow(fakes: readonly FakeUpstream[], reply: Reply, slowMs = SLOW_MS): () => RecordedRequest {
  return firstRequestGets(fakes, reply, { firstByteAfterMs: slowMs });
}

/** Both fakes of a pair answer `reply`, the first request either gets with `change` applied. */
function firstRequestGets(fakes: readonly FakeUpstream[], reply: Reply, change: Partial<Reply>): () => RecordedRequest {
  let first: RecordedRequest | undefined;
  for (const fake of fakes) {
    fake.answerWith((request) => {
      if (first) return reply;
      first = request;
      return { ...reply, ...change };
    });
  }
  return () => first!;
}

/** Every request of the pair starts its answer only after `SLOW_MS`. */
function allSlow(fakes: readonly FakeUpstream[]): void {
  for (const fake of fakes) fake.answerWith(() => ({ text: ['never'], firstByteAfterMs: SLOW_MS }));
}

const accepted = (fakes: readonly FakeUpstream[]) => fakes.flatMap((fake) => fake.accepted());

/** The slow request's connection was closed by the gateway before the fake answered. */
async function expectCancelled(request: RecordedRequest): Promise<void> {
  await request.closed;
  expect(request.closedEarly).toBe(true);
}

/** One timed-out attempt, then one that answered; the usage event counts both. */
async function expectTimedOutThenServed(): Promise<void> {
  expect(attempts.map((event) => [event.attempt, event.status, event.error?.status, event.error?.code, event.willRetry])).toEqual([
    [1, 'error', 504, 'upstream_first_byte_timeout', true],
    [2, 'ok', undefined, undefined, false],
  ]);
  expect(attempts[1]!.deployment).not.toBe(attempts[0]!.deployment);
  await expect.poll(() => usage.length).toBe(1);
  expect(usage[0]).toMatchObject({ status: 'ok', attempts: 2, deployment: attempts[1]!.deployment });
}

describe('first-byte timeout: a slow deployment is left for the next one before any byte reaches the client', () => {
  it('JSON on passthrough (Chat → Chat): the answer comes from the other deployment, the slow request is cancelled', async () => {
    const slow = firstRequestSlow(gpt, { text: ['From the fast one.'], usage: { input: 10, output: 4 } });
    const completion = await openai.chat.completions.create({ model: 'gpt', messages: [{ role: 'user', content: 'Hi' }] });
    expect(completion.choices[0]!.message.content).toBe('From the fast one.');
    await expectCancelled(slow());
    expect(accepted(gpt)).toHaveLength(2);
    await expectTimedOutThenServed();
    // The timeout counts against the slow deployment's health (one failure cools it in this gateway).
    const { catalog, policies } = gateway.options;
    const timedOut = catalog.deployments(catalog.get('gpt')!).find((deployment) => deployment.id === attempts[0]!.deployment)!;
    expect(policies.health.isCooling(timedOut)).toBe(true);
  });

  it('a stream on passthrough whose headers came but not its first event: the OpenAI SDK gets a complete stream from the other', async () => {
    const slow = firstRequestSlow(gpt, { text: ['Stre', 'amed', ' fast.'] });
    const stream = openai.chat.completions.stream({ model: 'gpt', messages: [{ role: 'user', content: 'Hi' }] });
    const final = await stream.finalChatCompletion();
    expect(final.choices[0]!.message.content).toBe('Streamed fast.');
    expect(final.choices[0]!.finish_reason).toBe('stop');
    await expectCancelled(slow());
    await expectTimedOutThenServed();
  });

  it.each([
    ['on passthrough (Messages → Messages)', 'claude', () => claude],
    ['translated (Messages → Chat)', 'gpt', () => gpt],
  ] as const)('a stream %s: the Anthropic SDK gets a complete stream from the other', async (_, model, pair) => {
    const slow = firstRequestSlow(pair(), { text: ['Streamed', ' fast.'] });
    const stream = anthropic.messages.stream({ model, max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] });
    const message = await stream.finalMessage();
    expect(message.content.map((block) => (block.type === 'text' ? block.text : block.type))).toEqual(['Streamed fast.']);
    expect(message.stop_reason).toBe('end_turn');
    await expectCancelled(slow());
    await expectTimedOutThenServed();
  });

  it('a translated stream (Chat → Messages) and translated JSON (Chat → Messages): the OpenAI SDK gets the other’s answer', async () => {
    let slow = firstRequestSlow(claude, { text: ['From', ' Claude.'] });
    const final = await openai.chat.completions.stream({ model: 'claude', messages: [{ role: 'user', content: 'Hi' }] }).finalChatCompletion();
    expect(final.choices[0]!.message.content).toBe('From Claude.');
    await expectCancelled(slow());
    await expectTimedOutThenServed();

    attempts.length = 0;
    usage.length = 0;
    gateway.options.policies.health.clear();
    slow = firstRequestSlow(claude, { text: ['Whole answer.'] });
    const completion = await openai.chat.completions.create({ model: 'claude', messages: [{ role: 'user', content: 'Hi' }] });
    expect(completion.choices[0]!.message.content).toBe('Whole answer.');
    await expectCancelled(slow());
    await expectTimedOutThenServed();
  });

  it('a media call (embeddings) falls over the same way', async () => {
    // Once fast on both first: the gateway's first embedding loads its tokenizer, which the budget would count.
    for (const fake of gemini) fake.answerWith(() => ({}));
    await openai.embeddings.create({ model: 'embed', input: 'warm up', encoding_format: 'float' });
    attempts.length = 0;
    await expect.poll(() => usage.length).toBe(1);
    usage.length = 0;

    const slow = firstRequestSlow(gemini, {});
    const answer = await openai.embeddings.create({ model: 'embed', input: 'hello', encoding_format: 'float' });
    expect(answer.data[0]!.embedding.length).toBeGreaterThan(0);
    await expectCancelled(slow());
    await expectTimedOutThenServed();
  });
});

describe('passthrough streams are answered at their first bytes, not their headers', () => {
  it('a connection cut after the headers, before the first event, falls over like any failure before the first byte', async () => {
    firstRequestGets(gpt, { text: ['Whole', ' stream.'] }, { cutAfter: 0 });
    const final = await openai.chat.completions.stream({ model: 'gpt', messages: [{ role: 'user', content: 'Hi' }] }).finalChatCompletion();
    expect(final.choices[0]!.message.content).toBe('Whole stream.');
    expect(attempts.map((event) => [event.status, event.error?.code, event.willRetry])).toEqual([
      ['error', 'upstream_unreachable', true],
      ['ok', undefined, false],
    ]);
  });
});

describe('first-byte timeout: every deployment slow', () => {
  const chat = { model: 'gpt', messages: [{ role: 'user', content: 'Hi' }] };
  it.each([
    ['Chat JSON', '/v1/chat/completions', { ...chat }, { authorization: 'Bearer sk-test' }],
    ['a Chat stream', '/v1/chat/completions', { ...chat, stream: true }, { authorization: 'Bearer sk-test' }],
    ['a Messages stream', '/v1/messages', { ...chat, max_tokens: 64, stream: true }, { 'x-api-key': 'sk-test', 'anthropic-version': '2023-06-01' }],
    [
      'a Gemini stream',
      '/v1beta/models/gpt:streamGenerateContent?alt=sse',
      { contents: [{ role: 'user', parts: [{ text: 'Hi' }] }] },
      { 'x-goog-api-key': 'sk-test' },
    ],
  ])('%s: a 504 in the route’s error shape, no stream bytes before it', async (name, path, body, headers) => {
    allSlow(gpt);
    const response = await fetch(served.url + path, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(response.status).toBe(504);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    const error = (await response.json()) as any;
    if (name.includes('Messages'))
      expect(error).toMatchObject({ type: 'error', error: { type: 'timeout_error', message: expect.stringContaining(`${BUDGET_MS} ms`) } });
    else if (name.includes('Gemini'))
      expect(error).toMatchObject({ error: { code: 504, status: 'DEADLINE_EXCEEDED', message: expect.stringContaining(`${BUDGET_MS} ms`) } });
    else
      expect(error).toMatchObject({
        error: { type: 'timeout_error', code: 'upstream_first_byte_timeout', message: expect.stringContaining(`${BUDGET_MS} ms`) },
      });
    const requests = accepted(gpt);
    expect(requests).toHaveLength(2);
    for (const request of requests) await expectCancelled(request);
    await expect.poll(() => usage.length).toBe(1);
    expect(usage[0]).toMatchObject({ status: 'error', httpStatus: 504, attempts: 2 });
  });

  it('the OpenAI SDK sees the 504 as an APIError with the code', async () => {
    allSlow(gpt);
    await expect(openai.chat.completions.create({ model: 'gpt', messages: [{ role: 'user', content: 'Hi' }], stream: true })).rejects.toMatchObject({
      status: 504,
      code: 'upstream_first_byte_timeout',
    });
  });
});

describe('first-byte timeout: what it does not cut', () => {
  it.each([
    ['passthrough (Chat → Chat)', () => openai.chat.completions.stream({ model: 'gpt', messages: [{ role: 'user', content: 'Hi' }] }).finalChatCompletion()],
    [
      'translated (Messages → Chat)',
      () => anthropic.messages.stream({ model: 'gpt', max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] }).finalMessage(),
    ],
  ])('a stream %s slower than the budget after its first event runs to its end', async (_, run) => {
    for (const fake of gpt) fake.answerWith(() => ({ text: ['Slow', ' but', ' steady.'], frameGapMs: BUDGET_MS + 100 }));
    const answer = (await run()) as any;
    const text = answer.choices?.[0].message.content ?? answer.content[0].text;
    expect(text).toBe('Slow but steady.');
    expect(accepted(gpt)).toHaveLength(1);
    expect(accepted(gpt)[0]!.closedEarly).toBe(false);
    expect(attempts.map((event) => event.status)).toEqual(['ok']);
  });

  it('a request that may not be replayed (x-infergate-retry: off) is not timed: its slow answer is waited for', async () => {
    const slow = firstRequestSlow(gpt, { text: ['Worth the wait.'] }, BUDGET_MS * 3);
    const completion = await openai.chat.completions.create(
      { model: 'gpt', messages: [{ role: 'user', content: 'Hi' }] },
      { headers: { 'x-infergate-retry': 'off' } },
    );
    expect(completion.choices[0]!.message.content).toBe('Worth the wait.');
    expect(accepted(gpt)).toEqual([slow()]);
    expect(attempts.map((event) => event.status)).toEqual(['ok']);
  });

  it('a budget that is not whole milliseconds is refused at construction', () => {
    const options = { keys: [{ key: 'sk-test' }], providers: { gpt1: gateway.options.providers.gpt1! } };
    expect(() => createGateway({ ...options, models: [{ id: 'm', provider: 'gpt1', firstByteTimeoutMs: -5 }] })).toThrow(
      'models[0].firstByteTimeoutMs must be an integer >= 0',
    );
    expect(() => createGateway({ ...options, models: [], policies: { retry: { firstByteTimeoutMs: 0.5 } } })).toThrow(
      'options.policies.retry.firstByteTimeoutMs must be an integer >= 0',
    );
  });

  it('a model with firstByteTimeoutMs 0 is not timed, whatever the policy says', async () => {
    const slow = firstRequestSlow(gpt, { text: ['Patience.'] }, BUDGET_MS * 3);
    const completion = await openai.chat.completions.create({ model: 'patient', messages: [{ role: 'user', content: 'Hi' }] });
    expect(completion.choices[0]!.message.content).toBe('Patience.');
    expect(slow().closedEarly).toBe(false);
    expect(attempts.map((event) => event.status)).toEqual(['ok']);
  });
});
