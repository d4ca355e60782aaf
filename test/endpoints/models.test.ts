import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGateway } from '../../src/gateway.js';
import { createAnthropicProvider } from '../../src/providers/anthropic/anthropic-provider.js';
import { createLocalProvider } from '../../src/providers/local/local-provider.js';
import { createOpenAIProvider } from '../../src/providers/openai/openai-provider.js';
import { serve, type Served } from '../helpers/serve.js';

let served: Served;
const ids = ['alpha', 'beta', 'gamma', 'delta'];
beforeAll(async () => {
  const gateway = createGateway({
    keys: [{ key: 'sk-all' }, { key: 'sk-two', models: ['alpha', 'gamma'] }],
    providers: { local: createLocalProvider() },
    models: ids.map((id) => ({ id, provider: 'local' })),
    logger: false,
  });
  served = await serve(gateway);
});
afterAll(() => served.close());

const openai = (key = 'sk-all') => new OpenAI({ baseURL: served.url + '/v1', apiKey: key, maxRetries: 0 });
const anthropic = (key = 'sk-all') => new Anthropic({ baseURL: served.url, apiKey: key, maxRetries: 0 });

describe('GET /v1/models for both kinds of clients', () => {
  it('lists the key’s models to the OpenAI SDK in its shape', async () => {
    const listed = [];
    for await (const model of openai('sk-two').models.list()) listed.push(model);
    expect(listed).toEqual([
      expect.objectContaining({ id: 'alpha', object: 'model', created: expect.any(Number), owned_by: 'local' }),
      expect.objectContaining({ id: 'gamma', object: 'model', created: expect.any(Number), owned_by: 'local' }),
    ]);
  });

  it('lists them to the Anthropic SDK (x-api-key, anthropic-version) in its shape, paging by limit and after_id', async () => {
    const listed = [];
    for await (const model of anthropic().models.list({ limit: 3 })) listed.push(model);
    expect(listed.map((model) => model.id)).toEqual(ids);
    expect(listed[0]).toMatchObject({ type: 'model', id: 'alpha', display_name: 'alpha', created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/) });
    const page = await anthropic().models.list({ limit: 2 });
    expect(page.data.map((model) => model.id)).toEqual(['alpha', 'beta']);
    expect([page.has_more, page.first_id, page.last_id]).toEqual([true, 'alpha', 'beta']);
  });

  it('takes Claude Code’s bare x-api-key, and answers its errors in Anthropic’s shape', async () => {
    const ok = await fetch(`${served.url}/v1/models?limit=1000`, { headers: { 'x-api-key': 'sk-two' } });
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { data: { id: string }[] }).data.map((model) => model.id)).toEqual(['alpha', 'gamma']);
    const wrong = await fetch(`${served.url}/v1/models`, { headers: { 'x-api-key': 'sk-wrong', 'anthropic-version': '2023-06-01' } });
    expect(wrong.status).toBe(401);
    expect(await wrong.json()).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
  });

  it('retrieves one model the key may use, to either SDK; others are 404', async () => {
    expect(await openai().models.retrieve('beta')).toMatchObject({ id: 'beta', object: 'model' });
    expect(await anthropic().models.retrieve('beta')).toMatchObject({ id: 'beta', type: 'model', display_name: 'beta' });
    await expect(openai('sk-two').models.retrieve('beta')).rejects.toMatchObject({ status: 404 });
    await expect(anthropic().models.retrieve('nope')).rejects.toMatchObject({ status: 404, error: { type: 'error', error: { type: 'not_found_error' } } });
  });
});

describe('Anthropic’s ModelInfo on each listed model', () => {
  let catalogServed: Served;
  beforeAll(async () => {
    const gateway = createGateway({
      keys: [{ key: 'sk-all' }],
      // Never called: the listing asks no upstream.
      providers: {
        local: createLocalProvider(),
        claude: createAnthropicProvider({ baseURL: 'http://127.0.0.1:9', apiKey: 'up' }),
        oai: createOpenAIProvider({ baseURL: 'http://127.0.0.1:9/v1', apiKey: 'up' }),
      },
      models: [
        { id: 'sonnet', provider: 'claude', upstreamModel: 'claude-sonnet-4-5-20250929' },
        { id: 'gpt', provider: 'oai', upstreamModel: 'gpt-5' },
        { id: 'in-house', provider: 'oai', upstreamModel: 'our-own-model' },
        { id: 'alpha', provider: 'local' },
      ],
      logger: false,
    });
    catalogServed = await serve(gateway);
  });
  afterAll(() => catalogServed.close());

  const client = () => new Anthropic({ baseURL: catalogServed.url, apiKey: 'sk-all', maxRetries: 0 });
  /** Every key of the SDK's `ModelInfo`: those it requires, `null` where nothing is known. */
  const info = (id: string, maxInputTokens: number | null) => ({
    id,
    type: 'model',
    display_name: id,
    created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
    capabilities: null,
    max_input_tokens: maxInputTokens,
    max_tokens: null,
    lifecycle: 'active',
    deprecated_at: null,
    retires_at: null,
    line: null,
  });

  it('lists capabilities, max_input_tokens (the catalog’s context window of the upstream model) and max_tokens', async () => {
    const listed: Anthropic.ModelInfo[] = [];
    for await (const model of client().models.list()) listed.push(model);
    expect(listed).toEqual([
      expect.objectContaining(info('sonnet', 200_000)),
      expect.objectContaining(info('gpt', 400_000)),
      // A model the catalog does not know, and the local provider's: null, as the SDK types allow.
      expect.objectContaining(info('in-house', null)),
      expect.objectContaining(info('alpha', null)),
    ]);
  });

  it('retrieves one with the same fields', async () => {
    expect(await client().models.retrieve('sonnet')).toEqual(expect.objectContaining(info('sonnet', 200_000)));
  });
});
