import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PRESIDIO_CALLS_IN_FLIGHT, presidioChecker, utf16Offsets } from '../../src/guardrails/adapters/presidio.js';
import { GuardrailCheckError } from '../../src/guardrails/adapters/remote-check.js';
import type { CheckContext } from '../../src/guardrails/checker.js';
import type { GuardrailSpecOf } from '../../src/guardrails/guardrail-schema.js';
import { type FakePresidio, startFakePresidio } from '../fakes/fake-presidio.js';

/**
 * The `presidio` guardrail against a fake analyzer that answers as Presidio does, offsets in
 * code points: the spans must come back in UTF-16 offsets, exact.
 */
let fake: FakePresidio;
const checkers: { close(): Promise<void> }[] = [];

beforeAll(async () => {
  fake = await startFakePresidio({ requiredHeaders: { 'x-api-key': 'presidio-proxy-key-123' } });
});
afterAll(async () => {
  await Promise.all(checkers.map((checker) => checker.close()));
  await fake.close();
});
beforeEach(() => fake.reset());

const checker = (extra: Partial<GuardrailSpecOf<'presidio'>> = {}) => {
  const made = presidioChecker({ type: 'presidio', name: 'pii-remote', analyzerUrl: fake.url, headers: { 'x-api-key': 'presidio-proxy-key-123' }, ...extra });
  checkers.push(made);
  return made;
};
const context = (signal = new AbortController().signal): CheckContext => ({ phase: 'output', signal, requestId: 'req-1', model: 'm' });
const check = (texts: string[], extra?: Partial<GuardrailSpecOf<'presidio'>>, signal?: AbortSignal) =>
  Promise.resolve(checker(extra).check(texts, context(signal)));

describe('presidioChecker', () => {
  it('turns the analyzer’s code-point offsets into UTF-16 spans: an emoji before an e-mail', async () => {
    const text = 'Hi 👋🏽 Ana Lima, write to ana@example.com or call 555-123-4567';
    const verdicts = await check([text]);
    const findings = verdicts[0]!.findings;
    expect(findings.map((finding) => [finding.category, text.slice(finding.start, finding.end)])).toEqual([
      ['person', 'Ana Lima'],
      ['email_address', 'ana@example.com'],
      ['phone_number', '555-123-4567'],
    ]);
    // The analyzer said 25 (each emoji one code point); the span is at 27 in UTF-16 units.
    expect(findings[1]).toEqual({ category: 'email_address', start: 27, end: 42 });
    expect(fake.requests[0]!.body).toEqual({ text, language: 'en' });
  });

  it('sends one call per non-empty text with the configured language, entities, threshold and headers', async () => {
    const texts = ['ana@example.com', '', 'call 555-123-4567 or mail bo@x.io'];
    const verdicts = await check(texts, { language: 'en', entities: ['EMAIL_ADDRESS', 'PHONE_NUMBER'], scoreThreshold: 0.5 });
    expect(verdicts).toEqual([
      { findings: [{ category: 'email_address', start: 0, end: 15 }] },
      { findings: [] },
      { findings: [{ category: 'email_address', start: 26, end: 33 }] },
    ]);
    expect(fake.requests.map((request) => request.body.text).sort()).toEqual([texts[0], texts[2]].sort());
    for (const request of fake.requests) {
      expect(request.body).toMatchObject({ language: 'en', entities: ['EMAIL_ADDRESS', 'PHONE_NUMBER'], score_threshold: 0.5 });
      expect(request.headers['x-api-key']).toBe('presidio-proxy-key-123');
    }
    expect(JSON.stringify(verdicts)).not.toContain('presidio-proxy-key');
  });

  it(`has at most ${PRESIDIO_CALLS_IN_FLIGHT} calls in flight`, async () => {
    fake.holdUntilQuiet(true);
    const texts = Array.from({ length: 10 }, (_, at) => `text ${at} ana@example.com`);
    const verdicts = await check(texts);
    expect(verdicts.every((verdict) => verdict.findings.length === 1)).toBe(true);
    expect(fake.requests).toHaveLength(10);
    expect(fake.peakConcurrency).toBe(PRESIDIO_CALLS_IN_FLIGHT);
  });

  it('stops every call when the signal aborts (the engine’s timeout)', async () => {
    fake.reply({ hang: true }, { hang: true });
    const controller = new AbortController();
    const checking = check(['one', 'two'], {}, controller.signal);
    await expect.poll(() => fake.requests.length).toBe(2);
    controller.abort();
    await expect(checking).rejects.toMatchObject({ name: 'AbortError' });
    await Promise.all(fake.requests.map((request) => request.closed));
    expect(fake.requests.every((request) => request.closedEarly)).toBe(true);
  });

  it('throws on an error status, without the text or the analyzer’s message', async () => {
    const secret = 'private text ana@example.com';
    fake.reply({ error: { status: 500, message: `failed on ${secret}` } });
    const failure = await check([secret]).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(GuardrailCheckError);
    expect(failure).toMatchObject({ guardrail: 'pii-remote', status: 500 });
    expect((failure as Error).message).not.toContain('ana@example.com');
  });

  it('throws when the analyzer refuses the request (missing proxy key, unsupported language)', async () => {
    await expect(check(['hello'], { headers: {} })).rejects.toBeInstanceOf(GuardrailCheckError);
    await expect(check(['hello'], { language: 'xx' })).rejects.toMatchObject({ status: 500 });
    expect(fake.requests.map((request) => request.rejected?.status)).toEqual([401, 500]);
  });

  it('throws on an answer it cannot read: not a list, offsets beyond the text, no entity type', async () => {
    fake.reply(
      { raw: JSON.stringify({ results: [] }) },
      { raw: JSON.stringify([{ entity_type: 'EMAIL_ADDRESS', start: 0, end: 99, score: 1 }]) },
      { raw: JSON.stringify([{ start: 0, end: 2, score: 1 }]) },
      { raw: 'not json' },
    );
    for (let attempt = 0; attempt < 4; attempt++) await expect(check(['short'])).rejects.toBeInstanceOf(GuardrailCheckError);
  });

  it('makes no call for empty texts', async () => {
    expect(await check(['', ''])).toEqual([{ findings: [] }, { findings: [] }]);
    expect(fake.requests).toHaveLength(0);
  });
});

describe('utf16Offsets', () => {
  it('maps code points to UTF-16 units: pairs count one, a lone surrogate one', () => {
    const offsets = utf16Offsets('a😀b\uD800c');
    expect(offsets.length).toBe(5);
    expect([0, 1, 2, 3, 4, 5].map((codePoint) => offsets.at(codePoint))).toEqual([0, 1, 3, 4, 5, 6]);
    expect(utf16Offsets('plain').at(3)).toBe(3);
  });
});

describe('the fake analyzer', () => {
  const post = (body: string, contentType = 'application/json') =>
    fetch(`${fake.url}/analyze`, { method: 'POST', headers: { 'content-type': contentType, 'x-api-key': 'presidio-proxy-key-123' }, body });

  it('refuses what Presidio refuses, with its statuses', async () => {
    const cases: [string, string, number, RegExp][] = [
      ['no text', JSON.stringify({ text: '', language: 'en' }), 500, /No text provided/],
      ['no language', JSON.stringify({ text: 'x' }), 500, /No language provided/],
      ['an unknown entity', JSON.stringify({ text: 'x', language: 'en', entities: ['NOPE'] }), 500, /No matching recognizers/],
      ['a threshold of the wrong type', JSON.stringify({ text: 'x', language: 'en', score_threshold: 'high' }), 400, /Failed to parse/],
    ];
    for (const [what, body, status, message] of cases) {
      const response = await post(body);
      expect(response.status, what).toBe(status);
      expect(((await response.json()) as { error: string }).error, what).toMatch(message);
    }
    expect((await post('text=x', 'application/x-www-form-urlencoded')).status).toBe(415);
  });

  it('answers a batch (`text` a list) with one list per text, keys sorted, offsets in code points', async () => {
    const response = await post(JSON.stringify({ text: ['😀 a@b.io', 'none'], language: 'en' }));
    expect(await response.text()).toBe('[[{"analysis_explanation":null,"end":8,"entity_type":"EMAIL_ADDRESS","score":1,"start":2}],[]]');
  });
});
