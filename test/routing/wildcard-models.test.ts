import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createGateway, type Gateway } from '../../src/gateway.js';
import type { UsageEvent } from '../../src/options.js';
import { createAnthropicProvider } from '../../src/providers/anthropic/anthropic-provider.js';
import { createOpenAIProvider } from '../../src/providers/openai/openai-provider.js';
import { ModelCatalog } from '../../src/routing/catalog.js';
import { startFakeAnthropic } from '../fakes/fake-anthropic.js';
import { startFakeOpenAI } from '../fakes/fake-openai.js';
import type { FakeUpstream } from '../fakes/fake-server.js';
import { serve, type Served } from '../helpers/serve.js';

describe('wildcard models', () => {
  let openaiFake: FakeUpstream;
  let anthropicFake: FakeUpstream;
  let gateway: Gateway;
  let served: Served;
  const usage: UsageEvent[] = [];
  const client = (apiKey: string) => new OpenAI({ baseURL: served.url + '/v1', apiKey, maxRetries: 0 });

  beforeAll(async () => {
    [openaiFake, anthropicFake] = await Promise.all([
      startFakeOpenAI({ endpoints: ['chat'], models: ['gpt-4.1', 'gpt-5', 'gpt-4o-2024-08-06', 'gpt-4o-mini'] }),
      startFakeAnthropic({ models: ['claude-sonnet-4-5', 'claude-haiku-4-5'] }),
    ]);
    gateway = createGateway({
      keys: [
        { key: 'sk-all', id: 'all' },
        { key: 'sk-one', id: 'one', models: ['openai/gpt-4.1'] },
        { key: 'sk-openai', id: 'openai-only', models: ['openai/*'] },
      ],
      providers: {
        oai: createOpenAIProvider({ baseURL: openaiFake.url + '/v1', apiKey: 'up-key', responses: false }),
        claude: createAnthropicProvider({ baseURL: anthropicFake.url, apiKey: 'up-key' }),
      },
      models: [
        { id: 'openai/*', provider: 'oai' },
        { id: 'anthropic/*', provider: 'claude', upstreamModel: 'claude-*' },
        // A listed id wins over the pattern that would match it, and a longer prefix over a shorter one.
        { id: 'openai/pinned', provider: 'oai', upstreamModel: 'gpt-4o-2024-08-06' },
        { id: 'openai/mini/*', provider: 'oai', upstreamModel: '*-mini' },
      ],
      logger: false,
      hooks: { onUsage: (event) => void usage.push(event) },
    });
    served = await serve(gateway);
  });
  afterAll(async () => {
    await served.close();
    await Promise.all([openaiFake.close(), anthropicFake.close()]);
  });
  beforeEach(() => {
    openaiFake.reset();
    anthropicFake.reset();
    usage.length = 0;
  });

  it('serve any name under the prefix as the upstream model of that name', async () => {
    const completion = await client('sk-all').chat.completions.create({ model: 'openai/gpt-4.1', messages: [{ role: 'user', content: 'hi' }] });
    expect(completion.choices[0]!.message.content).toBe('Hello from upstream.');
    expect(openaiFake.last().body.model).toBe('gpt-4.1');
    expect(usage[0]).toMatchObject({ model: 'openai/gpt-4.1', upstreamModel: 'gpt-4.1', provider: 'oai' });
  });

  it('put the name into an upstreamModel template, across protocols', async () => {
    const anthropic = new Anthropic({ baseURL: served.url, apiKey: 'sk-all', maxRetries: 0 });
    const message = await anthropic.messages.create({ model: 'anthropic/sonnet-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] });
    expect(message.content[0]).toMatchObject({ type: 'text', text: 'Hello from upstream.' });
    expect(anthropicFake.last().body.model).toBe('claude-sonnet-4-5');
  });

  it('prefer a listed id, then the longest prefix', async () => {
    await client('sk-all').chat.completions.create({ model: 'openai/pinned', messages: [{ role: 'user', content: 'hi' }] });
    expect(openaiFake.last().body.model).toBe('gpt-4o-2024-08-06');
    await client('sk-all').chat.completions.create({ model: 'openai/mini/gpt-4o', messages: [{ role: 'user', content: 'hi' }] });
    expect(openaiFake.last().body.model).toBe('gpt-4o-mini');
  });

  it('check the scope against the concrete id', async () => {
    await expect(client('sk-one').chat.completions.create({ model: 'openai/gpt-4.1', messages: [{ role: 'user', content: 'hi' }] })).resolves.toBeTruthy();
    const refused = await client('sk-one')
      .chat.completions.create({ model: 'openai/gpt-5', messages: [{ role: 'user', content: 'hi' }] })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.NotFoundError);
    expect((refused as InstanceType<typeof OpenAI.APIError>).param).toBe('model');
    // A pattern in a key's scope admits every name under it, and nothing else.
    await expect(client('sk-openai').chat.completions.create({ model: 'openai/gpt-5', messages: [{ role: 'user', content: 'hi' }] })).resolves.toBeTruthy();
    const outside = await client('sk-openai')
      .chat.completions.create({ model: 'anthropic/haiku-4-5', messages: [{ role: 'user', content: 'hi' }] })
      .catch((error: unknown) => error);
    expect(outside).toBeInstanceOf(OpenAI.NotFoundError);
    expect(openaiFake.accepted().map((request) => request.body.model)).toEqual(['gpt-4.1', 'gpt-5']);
  });

  it('answer 404 for a name no entry serves, and for the bare prefix', async () => {
    for (const model of ['mistral/large', 'openai/']) {
      const error = await client('sk-all')
        .chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] })
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(OpenAI.NotFoundError);
      expect((error as InstanceType<typeof OpenAI.APIError>).code).toBe('model_not_found');
    }
    expect(openaiFake.requests).toHaveLength(0);
  });

  it('are not listed by GET /v1/models (the names they serve are unknown), while listed ids are', async () => {
    const ids = (await client('sk-all').models.list()).data.map((model) => model.id);
    expect(ids).toEqual(['openai/pinned']);
  });
});

describe('wildcard ids in the catalog', () => {
  it('take one `*`, at the end', () => {
    expect(() => new ModelCatalog([{ id: 'openai/*/x', provider: 'p' }], ['p'])).toThrow(
      /models\[0\]\.id "openai\/\*\/x": a wildcard id has one `\*`, at its end/,
    );
    expect(() => new ModelCatalog([{ id: 'a/**', provider: 'p' }], ['p'])).toThrow(/one `\*`/);
  });

  it('give each concrete model its own deployments, named deployments included', () => {
    const catalog = new ModelCatalog(
      [
        {
          id: 'x/*',
          deployments: [
            { provider: 'p', id: 'east' },
            { provider: 'q', upstreamModel: 'acct/*' },
          ],
        },
      ],
      ['p', 'q'],
    );
    const model = catalog.get('x/llama')!;
    expect(catalog.deployments(model)).toEqual([
      { id: 'east/llama', provider: 'p', upstreamModel: 'llama', weight: 1 },
      { id: 'q/acct/llama', provider: 'q', upstreamModel: 'acct/llama', weight: 1 },
    ]);
    // The same id gives the same entry (health and sticky routing see one model).
    expect(catalog.get('x/llama')).toBe(model);
    expect(catalog.get('x/\u0000')).toBeUndefined();
  });
});
