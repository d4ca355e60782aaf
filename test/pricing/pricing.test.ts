import { describe, expect, it } from 'vitest';
import type { Logger } from '../../src/logger.js';
import { checkModelPrice } from '../../src/pricing/model-price.js';
import { Pricing, type PricedUsage } from '../../src/pricing/pricing.js';
import { catalogCost } from './catalog-cost.js';

const providerTypes: Record<string, string> = {
  oa: 'openai',
  claude: 'anthropic',
  google: 'gemini',
  vx: 'vertex',
  br: 'bedrock',
  az: 'azure',
  here: 'local',
};

function recordingLogger() {
  const warnings: { message: string; fields?: Record<string, unknown> | undefined }[] = [];
  const logger: Logger = { info() {}, error() {}, warn: (message, fields) => warnings.push({ message, fields }) };
  return { logger, warnings };
}

function pricing(prices: Record<string, Parameters<typeof checkModelPrice>[0]> = {}, logger: Logger = recordingLogger().logger) {
  return new Pricing({
    configuredPrice: (model) => prices[model] as ReturnType<ConstructorParameters<typeof Pricing>[0]['configuredPrice']>,
    providerType: (name) => providerTypes[name],
    logger,
  });
}

const event = (provider: string, upstreamModel: string, usage: PricedUsage['usage'], extra: Partial<PricedUsage> = {}): PricedUsage => ({
  model: 'public-name',
  provider,
  upstreamModel,
  usage,
  ...extra,
});

describe('catalog prices (genai-prices)', () => {
  it('prices gpt-4o with cached reads at the cache rate and charges each token once', () => {
    const usage = { input: 10_000, cachedRead: 4_000, output: 500 };
    const cost = pricing().costOf(event('oa', 'gpt-4o', usage));
    expect(cost.priceSource).toBe('genai-prices');
    // gpt-4o: $2.50 in, $1.25 cached, $10 out per million.
    expect(cost.costUsd).toBeCloseTo((6_000 * 2.5 + 4_000 * 1.25 + 500 * 10) / 1e6, 12);
    expect(cost.costUsd).toBeCloseTo(catalogCost('openai', 'gpt-4o', usage), 12);
  });

  it('prices claude-sonnet-4 with cache reads and writes', () => {
    const usage = { input: 12_000, cachedRead: 8_000, cacheWrite: 3_000, output: 700 };
    const cost = pricing().costOf(event('claude', 'claude-sonnet-4-20250514', usage));
    expect(cost.priceSource).toBe('genai-prices');
    // $3 in, $0.30 cache read, $3.75 cache write, $15 out per million.
    expect(cost.costUsd).toBeCloseTo((1_000 * 3 + 8_000 * 0.3 + 3_000 * 3.75 + 700 * 15) / 1e6, 12);
    expect(cost.costUsd).toBeCloseTo(catalogCost('anthropic', 'claude-sonnet-4-20250514', usage), 12);
  });

  it('prices gemini-2.5-pro by its tier: the whole request at the >200k rate past 200k input tokens', () => {
    const small = { input: 100_000, cachedRead: 20_000, output: 1_000 };
    const large = { input: 250_000, cachedRead: 20_000, output: 1_000 };
    const prices = pricing();
    const smallCost = prices.costOf(event('google', 'gemini-2.5-pro', small)).costUsd;
    const largeCost = prices.costOf(event('google', 'gemini-2.5-pro', large)).costUsd;
    expect(smallCost).toBeCloseTo((80_000 * 1.25 + 20_000 * 0.125 + 1_000 * 10) / 1e6, 12);
    expect(largeCost).toBeCloseTo((230_000 * 2.5 + 20_000 * 0.25 + 1_000 * 15) / 1e6, 12);
    expect(smallCost).toBeCloseTo(catalogCost('google', 'gemini-2.5-pro', small), 12);
    expect(largeCost).toBeCloseTo(catalogCost('google', 'gemini-2.5-pro', large), 12);
  });

  it('finds a Vertex Claude model (Google falls back to Anthropic in the catalog)', () => {
    const cost = pricing().costOf(event('vx', 'claude-sonnet-4-5@20250929', { input: 1_000, output: 100 }));
    expect(cost).toEqual({ costUsd: (1_000 * 3 + 100 * 15) / 1e6, priceSource: 'genai-prices' });
  });

  it('finds Bedrock model ids, cross-region prefix included, and Bedrock embeddings', () => {
    const claude = pricing().costOf(event('br', 'us.anthropic.claude-sonnet-4-20250514-v1:0', { input: 2_000, cachedRead: 1_000, output: 100 }));
    expect(claude).toEqual({ costUsd: (1_000 * 3 + 1_000 * 0.3 + 100 * 15) / 1e6, priceSource: 'genai-prices' });
    const titan = pricing().costOf(event('br', 'amazon.titan-embed-text-v2:0', { input: 1_000_000 }));
    expect(titan).toEqual({ costUsd: 0.1, priceSource: 'genai-prices' });
  });

  it('prices an Azure deployment by its public model id when the deployment name is not a model', () => {
    const cost = pricing().costOf(event('az', 'prod-east-deployment', { input: 1_000_000, output: 1_000_000 }, { model: 'gpt-4o' }));
    expect(cost).toEqual({ costUsd: 12.5, priceSource: 'genai-prices' });
  });

  it('tries the public model id when the upstream id is not in the catalog', () => {
    const cost = pricing().costOf(event('oa', 'my-finetune-7', { input: 1_000_000, output: 0 }, { model: 'gpt-4o' }));
    expect(cost).toEqual({ costUsd: 2.5, priceSource: 'genai-prices' });
  });
});

describe('config prices', () => {
  it('override the catalog, with cache and reasoning rates', () => {
    const prices = pricing({ 'public-name': { input: 1, output: 2, cacheRead: 0.1, cacheWrite: 1.25, reasoning: 4 } });
    const cost = prices.costOf(event('oa', 'gpt-4o', { input: 10_000, cachedRead: 5_000, cacheWrite: 1_000, output: 3_000, reasoning: 1_000 }));
    expect(cost.priceSource).toBe('config');
    expect(cost.costUsd).toBeCloseTo((4_000 * 1 + 5_000 * 0.1 + 1_000 * 1.25 + 2_000 * 2 + 1_000 * 4) / 1e6, 12);
  });

  it('charge cache tokens and reasoning at the input and output rates when those are not set', () => {
    const cost = pricing({ 'public-name': { input: 2, output: 8 } }).costOf(
      event('oa', 'x', { input: 1_000, cachedRead: 600, cacheWrite: 100, output: 50, reasoning: 20 }),
    );
    expect(cost).toEqual({ costUsd: (1_000 * 2 + 50 * 8) / 1e6, priceSource: 'config' });
  });

  it('price media per unit: images, seconds of video, characters of speech, seconds of audio', () => {
    const prices = pricing({ 'public-name': { image: 0.04, videoSecond: 0.1, speechCharacter: 0.000015, audioSecond: 0.0001 } });
    expect(prices.costOf(event('here', 'img', {}, { units: { images: 3 } }))).toEqual({ costUsd: 0.12, priceSource: 'config' });
    expect(prices.costOf(event('here', 'vid', {}, { units: { videoSeconds: 8 } }))).toEqual({ costUsd: 0.8, priceSource: 'config' });
    expect(prices.costOf(event('here', 'tts', {}, { units: { characters: 1_000 } }))).toEqual({ costUsd: 0.015, priceSource: 'config' });
    expect(prices.costOf(event('here', 'stt', {}, { units: { audioSeconds: 60 } }))).toEqual({ costUsd: 0.006, priceSource: 'config' });
  });

  it('a price of 0 is a free model, not an unpriced one', () => {
    const { logger, warnings } = recordingLogger();
    const cost = pricing({ 'public-name': { input: 0, output: 0 } }, logger).costOf(event('here', 'x', { input: 100, output: 100 }));
    expect(cost).toEqual({ costUsd: 0, priceSource: 'config' });
    expect(warnings).toEqual([]);
  });

  it('are validated, naming the bad field', () => {
    expect(() => checkModelPrice({ input: -1 }, 'models[0].price')).toThrow('models[0].price.input must be a number >= 0 (dollars)');
    expect(() => checkModelPrice({ inputs: 1 }, 'models[2].price')).toThrow('models[2].price.inputs: unknown field');
    expect(() => checkModelPrice({ output: '2' }, 'models[1].price')).toThrow('models[1].price.output must be a number >= 0');
    expect(() => checkModelPrice([], 'models[1].price')).toThrow('models[1].price must be an object');
  });
});

describe('unpriced models', () => {
  it('cost 0, are marked unpriced, and are logged once per model', () => {
    const { logger, warnings } = recordingLogger();
    const prices = pricing({}, logger);
    for (let i = 0; i < 3; i++) {
      expect(prices.costOf(event('oa', 'no-such-model-anywhere', { input: 100, output: 10 }, { model: 'mystery' }))).toEqual({
        costUsd: 0,
        priceSource: 'unpriced',
      });
    }
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.fields).toEqual({ model: 'mystery', provider: 'oa', upstreamModel: 'no-such-model-anywhere' });
    prices.costOf(event('oa', 'another-unknown', { input: 1 }, { model: 'mystery-2' }));
    expect(warnings).toHaveLength(2);
  });

  it("exclude the local provider: it runs in the gateway, free, even for a model named like a vendor's", () => {
    expect(pricing().costOf(event('here', 'gpt-4o', { input: 100, output: 10 }, { model: 'gpt-4o' }))).toEqual({ costUsd: 0, priceSource: 'local' });
  });

  it('include media the catalog prices only by tokens (no unit price for its seconds)', () => {
    const cost = pricing().costOf(event('oa', 'gpt-4o', {}, { units: { videoSeconds: 4 } }));
    expect(cost).toEqual({ costUsd: 0, priceSource: 'unpriced' });
  });

  it('never throw: a failing catalog is logged and costs 0', () => {
    const errors: string[] = [];
    const prices = new Pricing({
      configuredPrice: () => undefined,
      providerType: () => 'openai',
      logger: { info() {}, warn() {}, error: (message) => errors.push(message) },
      catalog: {
        name: 'broken',
        lookup() {
          throw new Error('bad data');
        },
      },
    });
    expect(prices.lookup({ model: 'm', provider: 'oa', upstreamModel: 'gpt-4o' })).toBeUndefined();
    expect(prices.costOf(event('oa', 'gpt-4o', { input: 1 }))).toEqual({ costUsd: 0, priceSource: 'unpriced' });
    expect(errors).toEqual(['price catalog failed; the model counts as unpriced', 'price catalog failed; the model counts as unpriced']);
  });
});

describe('catalog answers', () => {
  it('are kept 10 minutes per model and upstream, then asked again at the new time', () => {
    let now = Date.parse('2026-11-23T12:00:00Z');
    const asked: { upstreamModel: string; at: Date }[] = [];
    const prices = new Pricing({
      configuredPrice: () => undefined,
      providerType: () => 'openai',
      logger: recordingLogger().logger,
      now: () => now,
      catalog: {
        name: 'counted',
        lookup({ upstreamModel, at }) {
          asked.push({ upstreamModel, at });
          return upstreamModel === 'known' ? { input: 1, output: 2 } : undefined;
        },
      },
    });
    for (let i = 0; i < 3; i++) {
      expect(prices.costOf(event('oa', 'known', { input: 1_000_000, output: 1_000_000 }))).toEqual({ costUsd: 3, priceSource: 'counted' });
      expect(prices.costOf(event('oa', 'unknown', { input: 1 }, { model: 'unknown' }))).toEqual({ costUsd: 0, priceSource: 'unpriced' });
    }
    // Unknown answers are kept too: a model the catalog lacks is the slowest lookup.
    expect(asked).toEqual([
      { upstreamModel: 'known', at: new Date(now) },
      { upstreamModel: 'unknown', at: new Date(now) },
    ]);
    now += 10 * 60_000;
    prices.costOf(event('oa', 'known', { input: 1 }));
    expect(asked).toHaveLength(3);
    expect(asked[2]).toEqual({ upstreamModel: 'known', at: new Date(now) });
  });
});

describe('context windows', () => {
  it('come from the catalog, asked once per model and upstream; none for the local provider; a failing catalog is logged', () => {
    const asked: string[] = [];
    const errors: string[] = [];
    const prices = new Pricing({
      configuredPrice: () => undefined,
      providerType: (provider) => (provider === 'here' ? 'local' : 'openai'),
      logger: { info() {}, warn() {}, error: (message) => errors.push(message) },
      catalog: {
        name: 'windows',
        lookup: () => undefined,
        contextWindow({ upstreamModel }) {
          asked.push(upstreamModel);
          if (upstreamModel === 'broken') throw new Error('bad data');
          return upstreamModel === 'known' ? 128_000 : undefined;
        },
      },
    });
    for (let i = 0; i < 2; i++) {
      expect(prices.contextWindow({ model: 'm', provider: 'oa', upstreamModel: 'known' })).toBe(128_000);
      expect(prices.contextWindow({ model: 'm', provider: 'oa', upstreamModel: 'unknown' })).toBeUndefined();
      expect(prices.contextWindow({ model: 'm', provider: 'here', upstreamModel: 'known' })).toBeUndefined();
    }
    expect(asked).toEqual(['known', 'unknown']);
    expect(prices.contextWindow({ model: 'm', provider: 'oa', upstreamModel: 'broken' })).toBeUndefined();
    expect(errors).toEqual(['price catalog failed; the model’s context window is not known']);
  });
});
