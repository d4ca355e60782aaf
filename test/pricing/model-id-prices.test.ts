import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGateway, type Gateway } from '../../src/gateway.js';
import type { UsageEvent } from '../../src/options.js';
import { Pricing } from '../../src/pricing/pricing.js';
import { createBedrockProvider } from '../../src/providers/bedrock/bedrock-provider.js';
import type { Provider } from '../../src/providers/provider.js';
import { createVertexProvider } from '../../src/providers/vertex/vertex-provider.js';
import { type FakeVertex, startFakeVertex, VERTEX_LOCATION, VERTEX_PROJECT } from '../fakes/fake-vertex.js';
import { serve, type Served } from '../helpers/serve.js';

/**
 * The spellings of one model each provider accepts are priced as that model (code review
 * 2026-11-26, finding 6): a Vertex publisher path or `@version`, a Bedrock foundation-model ARN or
 * inference-profile ARN, a dated snapshot newer than the catalog. Before, each was "unpriced":
 * $0, and a dollar budget never stopped it.
 */
const providers: Record<string, Provider> = {
  vx: createVertexProvider({ accessToken: 'token', project: 'p', location: 'us-central1' }),
  br: createBedrockProvider({ region: 'us-east-1', accessKeyId: 'AKIAEXAMPLE', secretAccessKey: 'secret' }),
  oa: { type: 'openai', version: 2 },
};
afterAll(() => Promise.all(Object.values(providers).map((provider) => provider.close?.())));

/** Pricing as the gateway builds it, over these providers. */
const pricing = () =>
  new Pricing({
    configuredPrice: () => undefined,
    providerType: (name) => providers[name]?.type,
    catalogIds: (name, upstreamModel) => providers[name]?.catalogIds?.(upstreamModel) ?? [upstreamModel],
    logger: { info() {}, warn() {}, error() {} },
  });

/** Dollars per million input tokens the catalog gives the model (the base rate of a tiered price). */
function inputPrice(provider: string, upstreamModel: string): number | undefined {
  const input = pricing().lookup({ model: 'public-name', provider, upstreamModel })?.table.input;
  return typeof input === 'object' ? input.base : input;
}

describe('each provider’s spelling of a model is priced as the model', () => {
  it.each([
    ['a Vertex publisher path', 'vx', 'google/gemini-2.5-pro', 'gemini-2.5-pro'],
    ['Vertex’s full publisher path', 'vx', 'publishers/google/models/gemini-2.5-pro', 'gemini-2.5-pro'],
    ['a Vertex @version', 'vx', 'gemini-2.5-flash@001', 'gemini-2.5-flash'],
    ['a Vertex @version behind a publisher', 'vx', 'google/gemini-2.5-flash@001', 'gemini-2.5-flash'],
    [
      'a Bedrock foundation-model ARN',
      'br',
      'arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-opus-4-1-20250805-v1:0',
      'anthropic.claude-opus-4-1-20250805-v1:0',
    ],
    [
      'a Bedrock inference-profile ARN (its geography priced apart)',
      'br',
      'arn:aws:bedrock:us-east-1:123456789012:inference-profile/global.anthropic.claude-sonnet-4-5-20250929-v1:0',
      'global.anthropic.claude-sonnet-4-5-20250929-v1:0',
    ],
    [
      'a Bedrock inference profile the catalog has no geography price for',
      'br',
      'arn:aws:bedrock:us-east-1:123456789012:inference-profile/global.anthropic.claude-opus-4-1-20250805-v1:0',
      'anthropic.claude-opus-4-1-20250805-v1:0',
    ],
    ['a dated snapshot newer than the catalog', 'oa', 'gpt-4o-2099-01-01', 'gpt-4o'],
  ])('%s', (_name, provider, spelled, canonical) => {
    const expected = inputPrice(provider, canonical);
    expect(expected).toBeGreaterThan(0);
    expect(inputPrice(provider, spelled)).toBe(expected);
  });

  it('keeps a dated snapshot’s own price when the catalog has one, and the global profile’s own rate', () => {
    // gpt-4o-2024-05-13 cost twice gpt-4o's input rate.
    expect(inputPrice('oa', 'gpt-4o-2024-05-13')).toBe(5);
    expect(inputPrice('oa', 'gpt-4o')).toBe(2.5);
    expect(inputPrice('br', 'global.anthropic.claude-sonnet-4-5-20250929-v1:0')).toBe(3);
    expect(inputPrice('br', 'us.anthropic.claude-sonnet-4-5-20250929-v1:0')).toBe(3.3);
  });

  it('leaves what names no model unpriced: an application inference profile, an unknown id', () => {
    expect(inputPrice('br', 'arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2c3')).toBeUndefined();
    expect(inputPrice('vx', 'google/no-such-model@001')).toBeUndefined();
    expect(inputPrice('oa', 'no-such-model-2099-01-01')).toBeUndefined();
  });
});

describe('a Vertex model under a wildcard, through the gateway', () => {
  let fake: FakeVertex;
  let gateway: Gateway;
  let served: Served;
  const usage: UsageEvent[] = [];

  beforeAll(async () => {
    fake = await startFakeVertex();
    gateway = createGateway({
      keys: [{ key: 'sk-budget', id: 'budgeted', budget: { usd: 0.0015 } }],
      providers: { vertex: createVertexProvider({ credentials: fake.serviceAccount, location: VERTEX_LOCATION, baseURL: fake.url }) },
      models: [{ id: 'vertex/*', provider: 'vertex' }],
      logger: false,
      hooks: { onUsage: (event) => void usage.push(event) },
    });
    served = await serve(gateway);
  });
  afterAll(async () => {
    await served.close();
    await Promise.all(Object.values(gateway.options.providers).map((provider) => provider.close?.()));
    await fake.close();
  });

  const chat = (model: string) =>
    fetch(served.url + '/v1/chat/completions', {
      method: 'POST',
      headers: { authorization: 'Bearer sk-budget', 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'Hi' }] }),
    });

  it('costs the same under every spelling, and a spent budget stops them all', async () => {
    const forms = ['vertex/gemini-2.5-flash', 'vertex/google/gemini-2.5-flash', 'vertex/publishers/google/models/gemini-2.5-flash'];
    for (const model of forms) {
      fake.reply({ text: ['Hello'], usage: { input: 1_000, output: 100 } });
      const answer = await chat(model);
      expect(answer.status, model).toBe(200);
      await answer.arrayBuffer();
    }
    await expect.poll(() => usage.length).toBe(3);
    // gemini-2.5-flash: $0.30 in, $2.50 out per million.
    for (const event of usage) expect(event).toMatchObject({ priceSource: 'genai-prices', costUsd: (1_000 * 0.3 + 100 * 2.5) / 1e6 });
    expect(fake.requests.map((request) => request.path)).toEqual(
      forms.map(() => `/v1/projects/${VERTEX_PROJECT}/locations/${VERTEX_LOCATION}/publishers/google/models/gemini-2.5-flash:generateContent`),
    );
    // $0.00165 spent of $0.0015: every spelling is refused now.
    for (const model of forms) {
      const refused = await chat(model);
      expect(refused.status, model).toBe(429);
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('insufficient_quota');
    }
    expect(fake.requests).toHaveLength(3);
  });
});
