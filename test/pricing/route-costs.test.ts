import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config.js';
import { createGateway, type Gateway } from '../../src/gateway.js';
import type { Logger } from '../../src/logger.js';
import type { UsageEvent } from '../../src/policy/events.js';
import { createLocalProvider, localModels } from '../../src/providers/local/local-provider.js';
import { createOpenAIProvider } from '../../src/providers/openai/openai-provider.js';
import { startFakeOpenAIMedia } from '../fakes/fake-openai-media.js';
import type { NeutralUsage } from '../fakes/fake-server.js';
import { type Harness, startHarness } from '../upstreams/harness.js';
import { catalogCost } from './catalog-cost.js';

describe('text routes through real fake upstreams: dollars from the catalog, cache tokens at their rates', () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness();
  });
  afterAll(() => harness.close());

  const usage: NeutralUsage = { input: 20_000, cachedRead: 12_000, cacheWrite: 3_000, output: 900, reasoning: 200 };

  it('Chat Completions on an OpenAI upstream (gpt-4.1), streamed', async () => {
    harness.reset();
    harness.upstreams.chat.fake.reply({ text: ['Hello', ' there'], usage });
    const stream = await harness.openai.chat.completions.create({
      model: 'gpt-chat',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    for await (const _chunk of stream);
    await expect.poll(() => harness.usage.length).toBe(1);
    const event = harness.usage[0]!;
    // OpenAI reports no cache writes: the fake's Chat usage has cached reads only, and the rest is input.
    expect(event.usage).toMatchObject({ input: 20_000, cachedRead: 12_000, output: 900 });
    expect(event.priceSource).toBe('genai-prices');
    expect(event.costUsd).toBeCloseTo(catalogCost('openai', 'gpt-4.1', { input: 20_000, cachedRead: 12_000, output: 900 }), 12);
    // gpt-4.1: $2 in, $0.50 cached, $8 out per million.
    expect(event.costUsd).toBeCloseTo((8_000 * 2 + 12_000 * 0.5 + 900 * 8) / 1e6, 12);
  });

  it('Responses on a Responses upstream (gpt-5)', async () => {
    harness.reset();
    harness.upstreams.responses.fake.reply({ text: ['Hi'], usage });
    await harness.openai.responses.create({ model: 'gpt-resp', input: 'hi' });
    await expect.poll(() => harness.usage.length).toBe(1);
    const event = harness.usage[0]!;
    expect(event.priceSource).toBe('genai-prices');
    expect(event.costUsd).toBeCloseTo(catalogCost('openai', 'gpt-5', { input: 20_000, cachedRead: 12_000, output: 900 }), 12);
  });

  it('Messages on an Anthropic upstream (claude-sonnet-4-5) with cache reads and writes', async () => {
    harness.reset();
    harness.upstreams.anthropic.fake.reply({ text: ['Hi'], usage });
    await harness.anthropic.messages.create({ model: 'claude', max_tokens: 1000, messages: [{ role: 'user', content: 'hi' }] });
    await expect.poll(() => harness.usage.length).toBe(1);
    const event = harness.usage[0]!;
    expect(event.usage).toMatchObject({ input: 20_000, cachedRead: 12_000, cacheWrite: 3_000, output: 900 });
    expect(event.priceSource).toBe('genai-prices');
    expect(event.costUsd).toBeCloseTo(catalogCost('anthropic', 'claude-sonnet-4-5', usage), 12);
    // $3 in, $0.30 cache read, $3.75 cache write, $15 out per million: each token once.
    expect(event.costUsd).toBeCloseTo((5_000 * 3 + 12_000 * 0.3 + 3_000 * 3.75 + 900 * 15) / 1e6, 12);
  });

  it('a translated request (Chat client, Anthropic upstream) is priced by the upstream that answered', async () => {
    harness.reset();
    harness.upstreams.anthropic.fake.reply({ text: ['Hi'], usage });
    await harness.openai.chat.completions.create({ model: 'claude', messages: [{ role: 'user', content: 'hi' }] });
    await expect.poll(() => harness.usage.length).toBe(1);
    expect(harness.usage[0]!.costUsd).toBeCloseTo(catalogCost('anthropic', 'claude-sonnet-4-5', usage), 12);
  });
});

describe('an image model the catalog prices by tokens (gpt-image-1 on a fake OpenAI)', () => {
  it('charges the tokens the upstream reported, the images being made of them', async () => {
    const upstream = await startFakeOpenAIMedia();
    const usage: UsageEvent[] = [];
    const gateway = createGateway({
      keys: [{ key: 'sk-test' }],
      providers: { oai: createOpenAIProvider({ baseURL: upstream.baseURL, apiKey: 'sk-upstream-openai' }) },
      models: [{ id: 'img', provider: 'oai', upstreamModel: 'gpt-image-1', kind: 'image', family: 'gpt-image' }],
      logger: false,
      hooks: { onUsage: (event) => void usage.push(event) },
    });
    try {
      const response = await gateway.fetch('http://gateway/v1/images/generations', {
        method: 'POST',
        headers: { authorization: 'Bearer sk-test', 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'img', prompt: 'a red square' }),
      });
      expect(response.status).toBe(200);
      await response.arrayBuffer();
      await expect.poll(() => usage.length).toBe(1);
      // The fake reports 5 input and 10 output tokens; gpt-image-1: $5 text in, $40 image out per million.
      expect(usage[0]).toMatchObject({ units: { images: 1 }, usage: { input: 5, output: 10 }, priceSource: 'genai-prices' });
      expect(usage[0]!.costUsd).toBeCloseTo(catalogCost('openai', 'gpt-image-1', { input: 5, output: 10 }), 15);
      expect(usage[0]!.costUsd).toBeCloseTo((5 * 5 + 10 * 40) / 1e6, 15);
    } finally {
      await gateway.dispose();
      await upstream.close();
    }
  });
});

describe('media, embeddings and unpriced models through the gateway', () => {
  let gateway: Gateway;
  const usage: UsageEvent[] = [];
  const logged: { level: string; message: string; fields?: Record<string, unknown> | undefined }[] = [];
  const logger: Logger = {
    info: (message, fields) => logged.push({ level: 'info', message, fields }),
    warn: (message, fields) => logged.push({ level: 'warn', message, fields }),
    error: (message, fields) => logged.push({ level: 'error', message, fields }),
  };
  const post = (path: string, body: unknown) =>
    gateway.fetch(`http://gateway${path}`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk-test', 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const prices: Record<string, Record<string, number>> = {
    'local-image': { image: 0.04 },
    'local-speech': { speechCharacter: 0.000015 },
    'local-video': { videoSecond: 0.1 },
    'local-embedding': { input: 0.02 },
    'local-chat': { input: 1, output: 2 },
  };

  beforeAll(() => {
    gateway = createGateway({
      keys: [{ key: 'sk-test', id: 'team-a' }],
      providers: {
        local: createLocalProvider({ chunkDelayMs: 0, videoRenderMs: 0 }),
        // A host's own provider type, which no catalog knows.
        mystery: { ...createLocalProvider({ chunkDelayMs: 0 }), type: 'mystery' },
      },
      models: [
        ...localModels('local').map((model) => (prices[model.id] ? { ...model, price: prices[model.id] } : model)),
        { id: 'free-chat', provider: 'local', upstreamModel: 'local-chat', price: { input: 0, output: 0 } },
        { id: 'mystery-chat', provider: 'mystery', upstreamModel: 'local-reasoner' },
      ],
      logger,
      accessLog: true,
      hooks: { onUsage: (event) => void usage.push(event) },
    });
  });
  afterAll(() => gateway.dispose());

  async function only(response: Response): Promise<UsageEvent> {
    expect(response.status).toBe(200);
    await response.arrayBuffer();
    await expect.poll(() => usage.length).toBe(1);
    return usage[0]!;
  }

  it('images: per image', async () => {
    usage.length = 0;
    const event = await only(await post('/v1/images/generations', { model: 'local-image', prompt: 'a red square', n: 2, size: '256x256' }));
    expect(event).toMatchObject({ units: { images: 2 }, costUsd: 0.08, priceSource: 'config' });
  });

  it('speech: per character', async () => {
    usage.length = 0;
    const event = await only(
      await post('/v1/audio/speech', { model: 'local-speech', input: 'Hello there.', voice: 'en_female_anna_v1', response_format: 'wav' }),
    );
    expect(event).toMatchObject({ units: { characters: 12 }, priceSource: 'config' });
    expect(event.costUsd).toBeCloseTo(12 * 0.000015, 12);
  });

  it('video: per second asked for', async () => {
    usage.length = 0;
    const event = await only(await post('/v1/video/generations', { model: 'local-video', prompt: 'a sunrise', seconds: 4 }));
    expect(event).toMatchObject({ units: { videoSeconds: 4 }, priceSource: 'config' });
    expect(event.costUsd).toBeCloseTo(0.4, 12);
  });

  it('embeddings: per input token', async () => {
    usage.length = 0;
    const event = await only(await post('/v1/embeddings', { model: 'local-embedding', input: 'the quick brown fox' }));
    expect(event.usage.input).toBeGreaterThan(0);
    expect(event).toMatchObject({ priceSource: 'config' });
    expect(event.costUsd).toBeCloseTo((event.usage.input! * 0.02) / 1e6, 15);
  });

  it('text, with the cost in the access log line', async () => {
    usage.length = 0;
    logged.length = 0;
    const event = await only(await post('/v1/chat/completions', { model: 'local-chat', messages: [{ role: 'user', content: 'hello' }] }));
    const expected = (event.usage.input! * 1 + event.usage.output! * 2) / 1e6;
    expect(event.costUsd).toBeCloseTo(expected, 15);
    const line = logged.find((entry) => entry.message === 'request');
    expect(line?.fields).toMatchObject({ model: 'local-chat', costUsd: event.costUsd, priceSource: 'config' });
  });

  it('a model priced 0 is free, not unpriced', async () => {
    usage.length = 0;
    logged.length = 0;
    const event = await only(await post('/v1/chat/completions', { model: 'free-chat', messages: [{ role: 'user', content: 'hello' }] }));
    expect(event).toMatchObject({ costUsd: 0, priceSource: 'config' });
    expect(logged.filter((entry) => entry.level === 'warn')).toEqual([]);
  });

  it('a model with no price costs 0, is served, and is logged once', async () => {
    logged.length = 0;
    for (let i = 0; i < 2; i++) {
      usage.length = 0;
      const event = await only(await post('/v1/chat/completions', { model: 'mystery-chat', messages: [{ role: 'user', content: 'hello' }] }));
      expect(event).toMatchObject({ status: 'ok', costUsd: 0, priceSource: 'unpriced' });
    }
    const warnings = logged.filter((entry) => entry.level === 'warn');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.message).toContain('no known price');
    expect(warnings[0]!.fields).toEqual({ model: 'mystery-chat', provider: 'mystery', upstreamModel: 'local-reasoner' });
  });

  it('the local provider is free without a price, and not logged', async () => {
    logged.length = 0;
    usage.length = 0;
    const event = await only(await post('/v1/chat/completions', { model: 'local-reasoner', messages: [{ role: 'user', content: 'hello' }] }));
    expect(event).toMatchObject({ status: 'ok', costUsd: 0, priceSource: 'local' });
    expect(logged.filter((entry) => entry.level === 'warn')).toEqual([]);
  });
});

describe('a model price in the options and the config file', () => {
  it('createGateway names the bad field', () => {
    const build = (price: unknown) =>
      createGateway({
        keys: [{ key: 'sk-a' }],
        models: [{ id: 'm', provider: 'local', price: price as never }],
        logger: false,
      });
    expect(() => build({ input: -1 })).toThrow('models[0].price.input must be a number >= 0 (dollars)');
    expect(() => build({ cache_read: 1 })).toThrow('models[0].price.cache_read: unknown field');
    expect(() => build({ input: 1, output: 2, cacheRead: 0.1, cacheWrite: 1.25 })).not.toThrow();
  });

  it('the config file validates it, naming the path', () => {
    const config = (price: unknown) => ({ keys: [{ key: 'sk-a' }], providers: { local: { type: 'local' } }, models: [{ id: 'm', provider: 'local', price }] });
    expect(parseConfig(config({ input: 1, output: 2, cacheRead: 0.1, cacheWrite: 1.25 })).models[0]).toMatchObject({
      price: { input: 1, output: 2, cacheRead: 0.1, cacheWrite: 1.25 },
    });
    expect(() => parseConfig(config({ input: 'one' }), 'c.json')).toThrow(/models\[0\]\.price\.input: expected a number/);
    expect(() => parseConfig(config({ imagePrice: 1 }), 'c.json')).toThrow(/models\[0\]\.price\.imagePrice: unknown field/);
  });
});
