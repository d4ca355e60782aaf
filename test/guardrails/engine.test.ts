import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createGateway } from '../../src/gateway.js';
import type { GuardrailChecker, TextVerdict } from '../../src/guardrails/checker.js';
import type { GuardrailConfig } from '../../src/guardrails/guardrail.js';
import { GatewayError } from '../../src/errors.js';
import type { GatewayPlugin } from '../../src/plugins/plugin.js';
import type { UsageEvent } from '../../src/policy/events.js';
import { createOpenAIProvider } from '../../src/providers/openai/openai-provider.js';
import { startFakeOpenAI } from '../fakes/fake-openai.js';
import type { FakeUpstream } from '../fakes/fake-server.js';
import { serve, type Served } from '../helpers/serve.js';
import { maskBody } from '../../src/guardrails/mask-body.js';
import { parseConfig } from '../../src/config.js';

type Json = Record<string, any>;

/**
 * The guardrail engine on one protocol (Chat Completions, passthrough to a strict fake): what a
 * verdict does, timeouts and failOpen, merging lists by name, scoping by group, model and key,
 * and the `wrapText` stage a plugin can write. test/guardrails/matrix*.test.ts runs the same
 * rules through every client SDK and both paths.
 */

const EMAIL = 'jane.doe@example.com';
const SECRET = `sk-proj-${'A1b2C3d4E5f6G7h8'.repeat(3)}`;

/** A custom checker finding `needle` (as a span), answering after `delayMs` (forever when undefined is given as `hang`). */
function finder(
  needle: string,
  options: { delayMs?: number; hang?: boolean; fail?: boolean; bad?: boolean } = {},
): GuardrailChecker & { signals: AbortSignal[] } {
  const signals: AbortSignal[] = [];
  return {
    canMask: true,
    signals,
    check(texts, context) {
      signals.push(context.signal);
      const verdicts: TextVerdict[] = texts.map((text) => {
        const findings = [];
        for (let at = text.indexOf(needle); at >= 0; at = text.indexOf(needle, at + needle.length)) {
          findings.push({ category: 'needle', start: at, end: at + needle.length });
        }
        return { findings };
      });
      if (options.fail) return Promise.reject(new Error('checker down'));
      if (options.bad) return Promise.resolve(verdicts.slice(1));
      if (options.hang) return new Promise<TextVerdict[]>(() => {});
      return new Promise((resolve) => setTimeout(() => resolve(verdicts), options.delayMs ?? 0));
    },
  };
}

let upstream: FakeUpstream;
let gateway: Served | undefined;
const events: UsageEvent[] = [];

beforeAll(async () => {
  upstream = await startFakeOpenAI();
});
afterAll(async () => {
  await gateway?.close();
  await upstream.close();
});
beforeEach(() => {
  upstream.reset();
  events.length = 0;
});

async function start(
  guardrails: readonly GuardrailConfig[],
  extra: {
    keyGuardrails?: GuardrailConfig[];
    modelGuardrails?: GuardrailConfig[];
    group?: string;
    groupGuardrails?: Record<string, GuardrailConfig[]>;
    plugins?: GatewayPlugin[];
    cache?: boolean;
  } = {},
): Promise<string> {
  await gateway?.close();
  const instance = createGateway({
    providers: { oai: createOpenAIProvider({ baseURL: `${upstream.url}/v1`, apiKey: 'up-key' }) },
    models: [
      { id: 'gpt-4.1', provider: 'oai', ...(extra.modelGuardrails ? { guardrails: extra.modelGuardrails } : {}), ...(extra.cache ? { cache: true } : {}) },
    ],
    keys: [
      {
        key: 'sk-test',
        id: 'k1',
        models: '*',
        ...(extra.group ? { group: extra.group } : {}),
        ...(extra.keyGuardrails ? { guardrails: extra.keyGuardrails } : {}),
      },
    ],
    policies: { guardrails, ...(extra.groupGuardrails ? { groupGuardrails: extra.groupGuardrails } : {}) },
    hooks: { onUsage: (event) => void events.push(event) },
    plugins: extra.plugins ?? [],
    ...(extra.cache ? { responseCache: true } : {}),
  });
  gateway = await serve(instance as never);
  return gateway.url;
}

async function chat(url: string, content: string, extra: Json = {}): Promise<Response> {
  return fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: 'Bearer sk-test', 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4.1', messages: [{ role: 'user', content }], ...extra }),
  });
}

async function usage(): Promise<UsageEvent> {
  await expect.poll(() => events.length).toBeGreaterThan(0);
  return events[0]!;
}

describe('input guardrails', () => {
  it('a block refuses with 400 guardrail_blocked naming the guardrail, never the value; the upstream gets nothing', async () => {
    const url = await start([{ type: 'custom', name: 'no-needles', checker: finder('needle-123') }]);
    const response = await chat(url, 'here is needle-123 for you');
    expect(response.status).toBe(400);
    const body = (await response.json()) as Json;
    expect(body.error).toMatchObject({ code: 'guardrail_blocked', type: 'invalid_request_error' });
    expect(body.error.message).toContain('`no-needles`');
    expect(JSON.stringify(body)).not.toContain('needle-123');
    expect(upstream.requests).toHaveLength(0);
    const event = await usage();
    expect(event.guardrails).toEqual([
      expect.objectContaining({ guardrail: 'no-needles', phase: 'input', action: 'block', outcome: 'blocked', categories: ['needle'], findings: 1 }),
    ]);
    expect(event.httpStatus).toBe(400);
  });

  it('a mask replaces the value in every string of the body and keeps the client’s other fields on passthrough', async () => {
    const url = await start([{ type: 'custom', name: 'mask', action: 'mask', phase: 'input', checker: finder('needle-123') }]);
    const response = await chat(url, 'say needle-123 twice: needle-123', { vendor_extension: { keep: ['me', 1] }, user: 'u-1' });
    expect(response.status).toBe(200);
    const sent = upstream.last().body;
    expect(sent.messages[0].content).toBe('say [REDACTED:needle] twice: [REDACTED:needle]');
    expect(sent.vendor_extension).toEqual({ keep: ['me', 1] });
    expect(sent.user).toBe('u-1');
    expect(sent).not.toHaveProperty('stream');
    expect((await usage()).guardrails?.[0]).toMatchObject({ outcome: 'masked', findings: 2 });
  });

  it('monitor passes the text unchanged and reports it flagged', async () => {
    const url = await start([{ type: 'custom', name: 'watch', action: 'monitor', checker: finder('needle-123') }]);
    expect((await chat(url, 'needle-123')).status).toBe(200);
    expect(upstream.last().body.messages[0].content).toBe('needle-123');
    expect((await usage()).guardrails?.[0]).toMatchObject({ outcome: 'flagged', categories: ['needle'] });
  });

  it('a check that times out fails closed by default: 503 guardrail_unavailable, its signal aborted, nothing sent', async () => {
    const checker = finder('x', { hang: true });
    const url = await start([{ type: 'custom', name: 'slow', checker, timeoutMs: 50 }]);
    const response = await chat(url, 'hello');
    expect(response.status).toBe(503);
    expect(((await response.json()) as Json).error).toMatchObject({ code: 'guardrail_unavailable' });
    expect(upstream.requests).toHaveLength(0);
    expect(checker.signals[0]!.aborted).toBe(true);
    expect((await usage()).guardrails?.[0]).toMatchObject({ guardrail: 'slow', outcome: 'failed_closed' });
  });

  it('a failOpen check that times out passes the text and is reported failed_open', async () => {
    const url = await start([{ type: 'custom', name: 'slow', checker: finder('x', { hang: true }), timeoutMs: 50, failOpen: true }]);
    const response = await chat(url, 'hello x');
    expect(response.status).toBe(200);
    expect(upstream.last().body.messages[0].content).toBe('hello x');
    expect((await usage()).guardrails?.[0]).toMatchObject({ outcome: 'failed_open' });
  });

  it('a checker that throws, or answers one verdict too few, fails (closed)', async () => {
    for (const options of [{ fail: true }, { bad: true }]) {
      events.length = 0;
      const url = await start([{ type: 'custom', name: 'broken', checker: finder('x', options) }]);
      expect((await chat(url, 'hello')).status).toBe(503);
      expect((await usage()).guardrails?.[0]).toMatchObject({ outcome: 'failed_closed' });
    }
  });

  it('a key’s guardrail replaces the gateway’s of the same name; a group’s applies to its keys only', async () => {
    const block = finder('needle-123');
    let url = await start([{ type: 'custom', name: 'g', phase: 'input', checker: block }], {
      keyGuardrails: [{ type: 'custom', name: 'g', phase: 'input', action: 'monitor', checker: block }],
    });
    expect((await chat(url, 'needle-123')).status).toBe(200);
    expect((await usage()).guardrails).toEqual([expect.objectContaining({ guardrail: 'g', outcome: 'flagged' })]);

    url = await start([], { group: 'team-a', groupGuardrails: { 'team-b': [{ type: 'custom', name: 'b', checker: block }] } });
    expect((await chat(url, 'needle-123')).status).toBe(200);
    url = await start([], { group: 'team-b', groupGuardrails: { 'team-b': [{ type: 'custom', name: 'b', checker: block }] } });
    expect((await chat(url, 'needle-123')).status).toBe(400);
  });

  it('a model’s guardrails apply to that model', async () => {
    const url = await start([], { modelGuardrails: [{ type: 'custom', name: 'm', checker: finder('needle-123') }] });
    expect((await chat(url, 'needle-123')).status).toBe(400);
  });

  it('with no guardrail, the body goes upstream unchanged (unknown fields, numbers as written) and no outcome is reported', async () => {
    const url = await start([]);
    const text = '{ "model":"gpt-4.1",   "messages":[{"role":"user","content":"hi \\u00e9"}], "z_field": 1.50 }';
    const response = await fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk-test', 'content-type': 'application/json' },
      body: text,
    });
    expect(response.status).toBe(200);
    expect(upstream.last().body).toEqual(JSON.parse(text));
    expect(events.length === 0 || events[0]!.guardrails === undefined).toBe(true);
  });
});

describe('output guardrails', () => {
  it('mask the answer of a passthrough deployment (translated for the check) and leave it out of the response cache', async () => {
    const url = await start([{ type: 'custom', name: 'mask', action: 'mask', phase: 'output', checker: finder('needle-123') }], { cache: true });
    for (let round = 0; round < 2; round++) {
      upstream.reply({ text: ['the value is ', 'needle', '-123', ' ok'] });
      const response = await chat(url, 'what is it?');
      expect(response.headers.get('x-infergate-cache')).toBe('miss');
      const body = (await response.json()) as Json;
      expect(body.choices[0].message.content).toBe('the value is [REDACTED:needle] ok');
    }
    expect(upstream.requests).toHaveLength(2);
  });

  it('a block on a JSON answer is a 400 naming the guardrail', async () => {
    const url = await start([{ type: 'custom', name: 'out', phase: 'output', checker: finder('needle-123') }]);
    upstream.reply({ text: ['needle-123'] });
    const response = await chat(url, 'hi');
    expect(response.status).toBe(400);
    expect(((await response.json()) as Json).error.message).toContain('`out`');
  });

  it('a block in a started stream ends it with the protocol’s error frame, never [DONE]', async () => {
    const url = await start([{ type: 'custom', name: 'out', phase: 'output', checker: finder('needle-123'), window: 20 }]);
    // Frames apart, so the first sentence is released before the value arrives.
    upstream.reply({ text: ['a fine long first sentence that goes out. ', 'and then ', 'needle-123', ' later'], frameGapMs: 30 });
    const response = await chat(url, 'hi', { stream: true });
    expect(response.status).toBe(200);
    const text = await response.text();
    const content = text
      .split('\n')
      .filter((line) => line.startsWith('data: {"id"'))
      .map((line) => JSON.parse(line.slice(6)).choices[0]?.delta?.content ?? '')
      .join('');
    expect(content).toMatch(/^a fine long first sentence that goes /);
    expect(text).toContain('guardrail_blocked');
    expect(text).not.toContain('needle-123');
    expect(text).not.toContain('[DONE]');
    const event = await usage();
    expect(event.status).toBe('error');
    expect(event.guardrails?.[0]).toMatchObject({ phase: 'output', outcome: 'blocked' });
  });
});

describe('wrapText stages', () => {
  it('a plugin sees the prompt as the IR after the guardrails masked it, and may rewrite the body', async () => {
    const seen: string[] = [];
    const plugin: GatewayPlugin = {
      wrapText(turn, next) {
        const first = turn.ir.messages[0]!;
        if (first.role === 'user' && first.content[0]?.type === 'text') seen.push(first.content[0].text);
        turn.setBody({ ...turn.body, metadata: { tagged: 'yes' } });
        return next();
      },
    };
    const url = await start([{ type: 'custom', name: 'mask', action: 'mask', phase: 'input', checker: finder('needle-123') }], { plugins: [plugin] });
    expect((await chat(url, 'needle-123!')).status).toBe(200);
    expect(seen).toEqual(['[REDACTED:needle]!']);
    expect(upstream.last().body.metadata).toEqual({ tagged: 'yes' });
    expect(upstream.last().body.messages[0].content).toBe('[REDACTED:needle]!');
  });

  it('a stage may refuse with a GatewayError in the client’s shape; calling next twice is a bug (500), not a double call upstream', async () => {
    const refuse: GatewayPlugin = {
      wrapText: async () => {
        throw new GatewayError({ status: 403, code: 'not_today', message: 'No.' });
      },
    };
    let url = await start([], { plugins: [refuse] });
    const refused = await chat(url, 'hi');
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as Json).error.code).toBe('not_today');

    const twice: GatewayPlugin = {
      wrapText: async (_turn, next) => {
        await next();
        return next();
      },
    };
    url = await start([], { plugins: [twice] });
    expect((await chat(url, 'hi')).status).toBe(500);
    expect(upstream.requests).toHaveLength(1);
  });

  it('a stage that fails after next() gave it a stream cancels that stream: the upstream read is closed, not left to time out', async () => {
    const failAfter: GatewayPlugin = {
      wrapText: async (_turn, next) => {
        await next();
        throw new GatewayError({ status: 409, code: 'changed_my_mind', message: 'No.' });
      },
    };
    const url = await start([], { plugins: [failAfter] });
    upstream.reply({ text: ['a', 'b', 'c'], frameGapMs: 200 });
    const response = await chat(url, 'hi', { stream: true });
    expect(response.status).toBe(409);
    await upstream.last().closed;
    expect(upstream.last().closedEarly).toBe(true);
  });
});

describe('maskBody', () => {
  it('replaces a value found in a serialized tool input wherever the body holds it, and refuses more than 100 such values', () => {
    const input = { to: EMAIL, note: `key ${SECRET}` };
    const body = { model: 'm', messages: [{ role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'send', input }] }], other: 'plain' };
    const text = JSON.stringify(input);
    const findings = [
      { category: 'email', start: text.indexOf(EMAIL), end: text.indexOf(EMAIL) + EMAIL.length },
      { category: 'openai_key', start: text.indexOf(SECRET), end: text.indexOf(SECRET) + SECRET.length },
    ];
    const masked = maskBody(body, [text], ['(masked)'], [findings]);
    expect((masked.messages as Json[])[0]!.content[0].input).toEqual({ to: '[REDACTED:email]', note: 'key [REDACTED:openai_key]' });
    expect(masked.other).toBe('plain');
    expect((body.messages[0]!.content[0] as Json).input.to).toBe(EMAIL);

    const many = Array.from({ length: 101 }, (_, index) => `v${index}@example.com`);
    const manyText = JSON.stringify(many);
    const manyFindings = many.map((value) => ({ category: 'email', start: manyText.indexOf(value), end: manyText.indexOf(value) + value.length }));
    expect(() => maskBody({ input: many }, [manyText], ['(masked)'], [manyFindings])).toThrow(/more than 100/);
  });
});

describe('guardrails in the config file', () => {
  const base = { keys: [{ key: 'sk-test' }], models: [{ id: 'local-chat', provider: 'local' }] };

  it('are taken on policies, groups, models and keys', () => {
    const loaded = parseConfig({
      ...base,
      keys: [{ key: 'sk-test', guardrails: [{ type: 'pii', action: 'mask', categories: ['email'] }] }],
      models: [{ id: 'local-chat', provider: 'local', guardrails: [{ type: 'regex', patterns: [{ category: 'ticket', pattern: 'TCK-[0-9]{6}' }] }] }],
      policies: { guardrails: [{ type: 'secrets' }], groupGuardrails: { ops: [{ type: 'secrets', action: 'monitor' }] } },
    });
    expect(loaded.policies?.guardrails).toEqual([{ type: 'secrets' }]);
    expect(loaded.keys[0]!.guardrails).toEqual([{ type: 'pii', action: 'mask', categories: ['email'] }]);
    expect(loaded.models[0]!.guardrails).toHaveLength(1);
    // The file's guardrails build with the gateway (a bad provider name would throw here).
    expect(() => createGateway(loaded)).not.toThrow();
  });

  it('refuse an unknown type, an unknown field and a pattern that can backtrack exponentially, naming the path', () => {
    expect(() => parseConfig({ ...base, policies: { guardrails: [{ type: 'magic' }] } })).toThrow(/policies\.guardrails\[0\]/);
    expect(() => parseConfig({ ...base, policies: { guardrails: [{ type: 'secrets', acton: 'mask' }] } })).toThrow(/acton/);
    expect(() =>
      parseConfig({ ...base, models: [{ id: 'm', provider: 'local', guardrails: [{ type: 'regex', patterns: [{ category: 'x', pattern: '(a+)+$' }] }] }] }),
    ).toThrow(/models\[0\]\.guardrails\[0\]\.patterns\[0\]\.pattern.*nested quantifiers/);
  });
});
