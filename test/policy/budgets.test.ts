import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import type { KeyRecord } from '../../src/auth/key-store.js';
import { parseConfig } from '../../src/config.js';
import { createGateway, type Gateway } from '../../src/gateway.js';
import type { GatewayOptions } from '../../src/options.js';
import type { BudgetAccount } from '../../src/policy/budget.js';
import { modelCharge } from '../../src/policy/budget-free-model.js';
import type { PriceTable } from '../../src/pricing/model-price.js';
import type { Deployment } from '../../src/routing/deployments.js';
import type { ModelEntry } from '../../src/routing/model.js';
import type { UsageEvent } from '../../src/policy/events.js';
import { createAnthropicProvider } from '../../src/providers/anthropic/anthropic-provider.js';
import { createOpenAIProvider } from '../../src/providers/openai/openai-provider.js';
import { startFakeAnthropic } from '../fakes/fake-anthropic.js';
import { OPENAI_MODELS, startFakeOpenAI } from '../fakes/fake-openai.js';
import type { FakeUpstream } from '../fakes/fake-server.js';
import { serve, type Served } from '../helpers/serve.js';

/**
 * Dollar budgets through the gateway: a key's, its group's, the default's. Each answer of `gpt`
 * costs $0.02 (the fake's 12 input tokens at $1,000 per million, 4 output at $2,000), so the
 * numbers stay readable.
 */
const PRICE = { input: 1000, output: 2000 };
const DAY_MS = 86_400_000;

let served: Served | undefined;
let gateway: Gateway | undefined;
let upstreams: FakeUpstream[] = [];
afterEach(async () => {
  await served?.close();
  await Promise.all(upstreams.map((upstream) => upstream.close()));
  await Promise.all(Object.values(gateway?.options.providers ?? {}).map((provider) => provider.close?.()));
  served = gateway = undefined;
  upstreams = [];
});

interface Started {
  url: string;
  upstream: FakeUpstream;
  usage: UsageEvent[];
  warnings: string[];
  spent: (account: BudgetAccount) => Promise<number>;
}

async function start(options: Partial<GatewayOptions>): Promise<Started> {
  const usage: UsageEvent[] = [];
  const warnings: string[] = [];
  const upstream = await startFakeOpenAI({ endpoints: ['chat'], models: [...OPENAI_MODELS, 'house-model-7b'] });
  upstreams.push(upstream);
  gateway = createGateway({
    keys: [{ key: 'sk-test', id: 'team-a' }],
    providers: { openai: createOpenAIProvider({ baseURL: upstream.url + '/v1', apiKey: 'up-key', responses: false }) },
    models: [
      { id: 'gpt', provider: 'openai', upstreamModel: 'gpt-4.1', price: PRICE },
      { id: 'free', provider: 'openai', upstreamModel: 'gpt-4.1', price: { input: 0, output: 0 } },
      // Neither in the config nor in the catalog.
      { id: 'house', provider: 'openai', upstreamModel: 'house-model-7b' },
      // Priced by the catalog (genai-prices knows OpenAI's gpt-4.1).
      { id: 'catalogued', provider: 'openai', upstreamModel: 'gpt-4.1' },
    ],
    logger: { info() {}, warn: (message) => void warnings.push(message), error() {} },
    hooks: { onUsage: (event) => void usage.push(event) },
    ...options,
  });
  served = await serve(gateway);
  const engine = gateway.options.policies.limitEngine;
  return { url: served.url, upstream, usage, warnings, spent: (account) => engine.budgetSpent!(account, Date.now()) };
}

function chat(url: string, key = 'sk-test', model = 'gpt', extra: Record<string, unknown> = {}): Promise<Response> {
  return fetch(url + '/v1/chat/completions', {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'Hi' }], ...extra }),
  });
}

/** A request that must succeed; its body is read so that the ledger settles. */
async function served200(response: Promise<Response>): Promise<Response> {
  const answer = await response;
  expect(answer.status).toBe(200);
  await answer.arrayBuffer();
  return answer;
}

const nextMidnights = () =>
  [Math.ceil(Date.now() / DAY_MS) * DAY_MS, Math.ceil((Date.now() + 60_000) / DAY_MS) * DAY_MS].map((ms) => new Date(ms).toISOString());

describe('a key’s budget', () => {
  it('tells what is left on every answer, then refuses with 429 insufficient_quota that the openai SDK does not retry', async () => {
    const budget = { usd: 0.05, period: '1d' as const };
    const { url, upstream, usage, spent } = await start({ keys: [{ key: 'sk-test', id: 'team-a', budget }] });
    const account: BudgetAccount = { scope: 'key', owner: 'team-a', ...budget };

    const first = await served200(chat(url));
    expect(first.headers.get('x-infergate-budget-limit-usd')).toBe('0.05');
    expect(first.headers.get('x-infergate-budget-remaining-usd')).toBe('0.05');
    expect(first.headers.get('x-infergate-budget-scope')).toBe('key');
    expect(nextMidnights()).toContain(first.headers.get('x-infergate-budget-reset'));
    await expect.poll(() => spent(account)).toBe(0.02);
    expect(usage[0]).toMatchObject({ costUsd: 0.02, priceSource: 'config' });

    const second = await served200(chat(url));
    expect(second.headers.get('x-infergate-budget-remaining-usd')).toBe('0.03');
    await expect.poll(() => spent(account)).toBe(0.04);
    // $0.01 left: checked before, counted after, so this one may overshoot.
    await served200(chat(url));
    await expect.poll(() => spent(account)).toBe(0.06);

    const before = upstream.requests.length;
    const openai = new OpenAI({ baseURL: url + '/v1', apiKey: 'sk-test', maxRetries: 3 });
    const error = await openai.chat.completions.create({ model: 'gpt', messages: [{ role: 'user', content: 'Hi' }] }).then(
      () => undefined,
      (failure: unknown) => failure,
    );
    expect(error).toBeInstanceOf(OpenAI.APIError);
    const refused = error as InstanceType<typeof OpenAI.APIError>;
    expect(refused).toMatchObject({ status: 429, code: 'insufficient_quota', type: 'insufficient_quota' });
    expect(refused.message).toMatch(/this API key has spent its budget of \$0\.05 per day/);
    expect(refused.headers?.get('x-should-retry')).toBe('false');
    expect(refused.headers?.get('x-infergate-budget-remaining-usd')).toBe('0');
    const retryAfter = Number(refused.headers?.get('retry-after'));
    const untilMidnight = Math.ceil((Math.ceil(Date.now() / DAY_MS) * DAY_MS - Date.now()) / 1000);
    expect(retryAfter).toBeGreaterThanOrEqual(untilMidnight - 60);
    expect(retryAfter).toBeLessThanOrEqual(untilMidnight + 1);
    // No retry, and no upstream call.
    expect(upstream.requests.length).toBe(before);
  });

  it('never blocks a free model after the budget is spent', async () => {
    const { url, upstream, spent } = await start({ keys: [{ key: 'sk-test', id: 'team-a', budget: { usd: 0.01 } }] });
    await served200(chat(url));
    await expect.poll(() => spent({ scope: 'key', owner: 'team-a', usd: 0.01 })).toBe(0.02);
    expect((await chat(url)).status).toBe(429);

    const before = upstream.requests.length;
    const free = await served200(chat(url, 'sk-test', 'free'));
    expect(free.headers.get('x-infergate-budget-remaining-usd')).toBe('0');
    expect(free.headers.has('x-infergate-budget-reset')).toBe(false);
    expect(upstream.requests.length).toBe(before + 1);
    expect(await spent({ scope: 'key', owner: 'team-a', usd: 0.01 })).toBe(0.02);
  });

  it('policies.budget is every key’s default; a key’s own budget replaces it and `budget: false` opts out', async () => {
    const { url } = await start({
      keys: [
        { key: 'sk-test', id: 'team-a' },
        { key: 'sk-big', id: 'big', budget: { usd: 100, period: 'month' } },
        { key: 'sk-admin', id: 'admin', budget: false },
      ],
      policies: { budget: { usd: 0.01, period: '7d' } },
    });
    await served200(chat(url));
    await expect.poll(async () => (await chat(url)).status).toBe(429);
    const big = await served200(chat(url, 'sk-big'));
    expect(big.headers.get('x-infergate-budget-limit-usd')).toBe('100');
    const admin = await served200(chat(url, 'sk-admin'));
    expect(admin.headers.has('x-infergate-budget-limit-usd')).toBe(false);
  });
});

describe('a model without a known price', () => {
  it('is refused to a key with a dollar budget (403 model_unpriced, logged once), before any upstream call', async () => {
    const { url, upstream, warnings } = await start({ keys: [{ key: 'sk-test', id: 'team-a', budget: { usd: 100 } }] });
    for (let i = 0; i < 2; i++) {
      const refused = await new OpenAI({ baseURL: url + '/v1', apiKey: 'sk-test', maxRetries: 2 }).chat.completions
        .create({ model: 'house', messages: [{ role: 'user', content: 'Hi' }] })
        .catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(OpenAI.PermissionDeniedError);
      expect(refused).toMatchObject({ status: 403, code: 'model_unpriced', param: 'model' });
      expect((refused as Error).message).toMatch(/The model `house` has no known price/);
    }
    expect(upstream.requests).toHaveLength(0);
    expect(warnings.filter((message) => /refused to keys with a dollar budget/.test(message))).toHaveLength(1);
    // Priced and free models are still served to that key.
    await served200(chat(url, 'sk-test', 'gpt'));
    await served200(chat(url, 'sk-test', 'free'));
  });

  it('is served to a key without a budget, whatever the option', async () => {
    const { url } = await start({ keys: [{ key: 'sk-test', id: 'team-a' }] });
    await served200(chat(url, 'sk-test', 'house'));
  });

  it('is served with policies.unpricedModels "allow": counted $0, never blocked by a spent budget (logged once)', async () => {
    const { url, upstream, usage, warnings, spent } = await start({
      keys: [{ key: 'sk-test', id: 'team-a', budget: { usd: 0.01 } }],
      policies: { unpricedModels: 'allow' },
    });
    await served200(chat(url));
    await expect.poll(() => spent({ scope: 'key', owner: 'team-a', usd: 0.01 })).toBe(0.02);
    expect((await chat(url)).status).toBe(429);
    const before = upstream.requests.length;
    await served200(chat(url, 'sk-test', 'house'));
    await served200(chat(url, 'sk-test', 'house'));
    expect(upstream.requests.length).toBe(before + 2);
    await expect.poll(() => usage.filter((event) => event.model === 'house').length).toBe(2);
    for (const event of usage.filter((event) => event.model === 'house')) expect(event).toMatchObject({ costUsd: 0, priceSource: 'unpriced' });
    expect(warnings.filter((message) => /budgets do not block it/.test(message))).toHaveLength(1);
    expect(await spent({ scope: 'key', owner: 'team-a', usd: 0.01 })).toBe(0.02);
  });

  it('is refused when any of its deployments has no known price: a fallback there would cost $0', async () => {
    const { url, upstream } = await start({
      keys: [{ key: 'sk-test', id: 'team-a', budget: { usd: 100 } }],
      models: [
        {
          id: 'mixed',
          deployments: [
            { provider: 'openai', upstreamModel: 'gpt-4.1' },
            { provider: 'openai', upstreamModel: 'house-model-7b' },
          ],
        },
      ],
    });
    const refused = await chat(url, 'sk-test', 'mixed');
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('model_unpriced');
    expect(upstream.requests).toHaveLength(0);
  });

  it('policies.unpricedModels is "refuse" or "allow", in the options and the config file', () => {
    const options = { providers: {}, models: [], logger: false as const, keys: [{ key: 'sk' }] };
    expect(() => createGateway({ ...options, policies: { unpricedModels: 'serve' as 'allow' } })).toThrow(
      'options.policies.unpricedModels must be "refuse" or "allow"',
    );
    expect(parseConfig({ keys: [{ key: 'sk' }], policies: { unpricedModels: 'allow' } }).policies).toMatchObject({ unpricedModels: 'allow' });
    expect(() => parseConfig({ keys: [{ key: 'sk' }], policies: { unpricedModels: 'never' } })).toThrow(
      expect.objectContaining({ issues: ['policies.unpricedModels: expected "refuse" or "allow", got "never"'] }),
    );
  });
});

describe('which models a spent budget blocks', () => {
  it('a model priced by the catalog is blocked like one priced in the config', async () => {
    const { url } = await start({ keys: [{ key: 'sk-test', id: 'team-a', budget: { usd: 0 } }] });
    for (const model of ['gpt', 'catalogued']) {
      const refused = await chat(url, 'sk-test', model);
      expect(refused.status).toBe(429);
      await refused.arrayBuffer();
    }
    await served200(chat(url, 'sk-test', 'free'));
  });

  it('a model is free only when every deployment is known to cost 0, tiers included', () => {
    const model: ModelEntry = { id: 'm', provider: 'a' };
    const charge = (...tables: (PriceTable | undefined)[]) =>
      modelCharge(model, {
        catalog: { deployments: () => tables.map((_, index) => ({ id: `d${index}`, provider: `p${index}`, upstreamModel: 'u' }) as unknown as Deployment) },
        pricing: {
          lookup: ({ provider }) => (tables[Number(provider.slice(1))] ? { table: tables[Number(provider.slice(1))]!, source: 'config' } : undefined),
        },
      });
    expect(charge({ input: 0, output: 0 })).toBe('free');
    expect(charge({ input: 0, output: 0 }, { input: 0, output: 0.5 })).toBe('priced');
    expect(charge({ input: { base: 0, tiers: [{ start: 200_000, price: 2 }] }, output: 0 })).toBe('priced');
    expect(charge({ input: 0, output: 0 }, undefined)).toBe('unpriced');
    expect(charge({})).toBe('unpriced');
    expect(charge({ image: 0.04 })).toBe('priced');
  });
});

describe('a group’s budget', () => {
  it('is shared by the keys of the group: spend by one refuses the other, another group is not touched', async () => {
    const { url, spent } = await start({
      keys: [
        { key: 'sk-a', id: 'a', group: 'team' },
        { key: 'sk-b', id: 'b', group: 'team', budget: { usd: 10 } },
        { key: 'sk-c', id: 'c', group: 'other' },
      ],
      policies: { groupBudgets: { team: { usd: 0.05, period: '30d' } } },
    });
    const team: BudgetAccount = { scope: 'group', owner: 'team', usd: 0.05, period: '30d' };
    const first = await served200(chat(url, 'sk-a'));
    expect(first.headers.get('x-infergate-budget-scope')).toBe('group');
    await served200(chat(url, 'sk-a'));
    await expect.poll(() => spent(team)).toBe(0.04);
    // b's own budget has more left than the group's: the headers tell the group's.
    const fromB = await served200(chat(url, 'sk-b'));
    expect(fromB.headers.get('x-infergate-budget-scope')).toBe('group');
    expect(fromB.headers.get('x-infergate-budget-remaining-usd')).toBe('0.01');
    await expect.poll(() => spent(team)).toBe(0.06);
    expect(await spent({ scope: 'key', owner: 'b', usd: 10 })).toBe(0.02);

    for (const key of ['sk-a', 'sk-b']) {
      const refused = await chat(url, key);
      expect(refused.status).toBe(429);
      expect(refused.headers.get('x-should-retry')).toBe('false');
      const body = (await refused.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe('insufficient_quota');
      expect(body.error.message).toMatch(/the group "team" of this API key has spent its budget of \$0\.05 per 30 days/);
    }
    const other = await served200(chat(url, 'sk-c'));
    expect(other.headers.has('x-infergate-budget-limit-usd')).toBe(false);
  });
});

describe('a stream the client cut', () => {
  it('is charged for what it produced: the input and the output counted before the cut', async () => {
    const anthropic = await startFakeAnthropic();
    upstreams.push(anthropic);
    const usage: UsageEvent[] = [];
    gateway = createGateway({
      keys: [{ key: 'sk-test', id: 'team-a', budget: { usd: 1, period: '1d' } }],
      providers: { claude: createAnthropicProvider({ baseURL: anthropic.url, apiKey: 'up-key' }) },
      models: [{ id: 'claude', provider: 'claude', upstreamModel: 'claude-sonnet-4-5', price: PRICE }],
      logger: false,
      hooks: { onUsage: (event) => void usage.push(event) },
    });
    served = await serve(gateway);
    // message_start (12 input tokens, 1 output so far), the block's start, a ping, one text delta; then silence.
    anthropic.reply({ text: ['Once', ' upon', ' a time'], usage: { input: 12, output: 30 }, stallAfter: 4 });
    const openai = new OpenAI({ baseURL: served.url + '/v1', apiKey: 'sk-test', maxRetries: 0 });
    const stream = await openai.chat.completions.create({ model: 'claude', stream: true, messages: [{ role: 'user', content: 'Tell me a story' }] });
    for await (const chunk of stream) {
      if (chunk.choices[0]?.delta.content) break;
    }
    await expect.poll(() => usage.length).toBe(1);
    expect(usage[0]).toMatchObject({ cancelled: true, usage: { input: 12, output: 1 }, costUsd: 0.014, priceSource: 'config' });
    const engine = gateway.options.policies.limitEngine;
    await expect.poll(() => engine.budgetSpent!({ scope: 'key', owner: 'team-a', usd: 1, period: '1d' }, Date.now())).toBe(0.014);
  });
});

describe('a custom key store’s budget', () => {
  it('is enforced from KeyRecord.budget; a malformed one is logged and handled as whenLimitsUnavailable says', async () => {
    const records: Record<string, KeyRecord> = {
      'sk-zero': { id: 'zero', models: '*', budget: { usd: 0, period: '1d' } },
      'sk-bad': { id: 'bad', models: '*', budget: { usd: -5 } },
    };
    const errors: { message: string; fields: Record<string, unknown> | undefined }[] = [];
    const { url } = await start({
      keys: { lookup: (key) => records[key] },
      logger: { info() {}, warn() {}, error: (message, fields) => void errors.push({ message, fields }) },
      policies: { whenLimitsUnavailable: 'closed' },
    });
    const zero = await chat(url, 'sk-zero');
    expect(zero.status).toBe(429);
    expect(((await zero.json()) as { error: { code: string } }).error.code).toBe('insufficient_quota');
    await served200(chat(url, 'sk-zero', 'free'));

    const bad = await chat(url, 'sk-bad');
    expect(bad.status).toBe(503);
    expect(((await bad.json()) as { error: { code: string } }).error.code).toBe('limits_unavailable');
    expect(errors[0]).toMatchObject({ message: 'budget cannot be enforced' });
    expect(String(errors[0]!.fields!.message)).toMatch(/KeyRecord\.budget of key bad\.usd must be a number >= 0/);
  });
});

describe('budget options', () => {
  const base = { providers: {}, models: [], logger: false as const };

  it('are validated at construction, naming the bad field', () => {
    expect(() => createGateway({ ...base, keys: [{ key: 'sk', budget: { usd: -1 } }] })).toThrow(/options\.keys\[0\]\.budget\.usd must be a number >= 0/);
    expect(() => createGateway({ ...base, keys: [{ key: 'sk' }], policies: { budget: { usd: 1, period: 'weekly' as never } } })).toThrow(
      /options\.policies\.budget\.period must be one of "1d", "7d", "30d", "month"/,
    );
    expect(() => createGateway({ ...base, keys: [{ key: 'sk' }], policies: { groupBudgets: { team: { usd: 1, periods: '1d' } as never } } })).toThrow(
      /options\.policies\.groupBudgets\.team\.periods: unknown field \(allowed: usd, period\)/,
    );
  });

  it('need an engine that keeps budgets: one without supportsBudgets is refused rather than silently not enforcing', () => {
    const engine = { admit: async () => ({ allowed: true as const }), settle: async () => {}, spent: async () => 0 };
    expect(() => createGateway({ ...base, keys: [{ key: 'sk' }], policies: { limitEngine: engine, budget: { usd: 1 } } })).toThrow(
      /limitEngine does not keep dollar budgets/,
    );
  });

  it('in the config file: a key’s budget (or false), policies.budget and policies.groupBudgets, each error naming its path', () => {
    const config = parseConfig({
      keys: [
        { key: 'sk-a', budget: { usd: 5, period: '1d' } },
        { key: 'sk-b', budget: false },
      ],
      policies: { budget: { usd: 1, period: 'month' }, groupBudgets: { team: { usd: 50 } } },
    });
    expect(config.keys.map((key) => key.budget)).toEqual([{ usd: 5, period: '1d' }, false]);
    expect(config.policies).toMatchObject({ budget: { usd: 1, period: 'month' }, groupBudgets: { team: { usd: 50 } } });

    const issues = (json: unknown) => {
      try {
        parseConfig(json);
      } catch (error) {
        return (error as { issues: string[] }).issues.join('\n');
      }
      throw new Error('expected a ConfigError');
    };
    expect(issues({ keys: [{ key: 'sk', budget: { usd: 5, period: 'weekly' } }] })).toMatch(/^keys\[0\]\.budget/);
    expect(issues({ keys: [{ key: 'sk' }], policies: { budget: { usd: 5, period: 'weekly' } } })).toMatch(
      /policies\.budget\.period: expected one of "1d", "7d", "30d", "month"/,
    );
    expect(issues({ keys: [{ key: 'sk' }], policies: { groupBudgets: { team: { usd: '5' } } } })).toMatch(
      /policies\.groupBudgets\.team\.usd: expected a number, got "5"/,
    );
  });
});
