import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { bedrockGuardrailChecker } from '../../src/guardrails/adapters/bedrock-guardrail.js';
import { GuardrailCheckError } from '../../src/guardrails/adapters/remote-check.js';
import type { CheckContext, GuardrailPhase } from '../../src/guardrails/checker.js';
import type { GuardrailSpecOf } from '../../src/guardrails/guardrail-schema.js';
import { createBedrockProvider } from '../../src/providers/bedrock/bedrock-provider.js';
import type { Provider } from '../../src/providers/provider.js';
import { BEDROCK_CREDENTIALS, BEDROCK_REGION, type FakeBedrock, startFakeBedrock } from '../fakes/fake-bedrock.js';
import { FAKE_GUARDRAIL, GUARDRAIL_PLANTS } from '../fakes/fake-bedrock-guardrail.js';

/**
 * The `bedrock-guardrail` guardrail against the fake Bedrock runtime, which verifies every SigV4
 * signature and answers ApplyGuardrail with the assessments of its planted policies.
 */
let fake: FakeBedrock;
let provider: Provider;

beforeAll(async () => {
  fake = await startFakeBedrock();
  provider = createBedrockProvider({ baseURL: fake.url, region: BEDROCK_REGION, ...BEDROCK_CREDENTIALS });
});
afterAll(async () => {
  await provider.close?.();
  await fake.close();
});
beforeEach(() => fake.reset());

const spec = (extra: Partial<GuardrailSpecOf<'bedrock-guardrail'>> = {}): GuardrailSpecOf<'bedrock-guardrail'> => ({
  type: 'bedrock-guardrail',
  provider: 'aws',
  guardrailIdentifier: FAKE_GUARDRAIL.identifier,
  guardrailVersion: '1',
  ...extra,
});
const context = (phase: GuardrailPhase = 'input', signal = new AbortController().signal): CheckContext => ({ phase, signal, requestId: 'req-1', model: 'm' });
const check = (texts: string[], phase?: GuardrailPhase, extra?: Partial<GuardrailSpecOf<'bedrock-guardrail'>>) =>
  Promise.resolve(bedrockGuardrailChecker(spec(extra), provider).check(texts, context(phase)));

describe('bedrockGuardrailChecker', () => {
  it('sends the non-empty texts as the content of one signed call and finds PII and regex matches back as spans', async () => {
    const first = 'Mail 📧 ana@example.com or EMP-123456, then ana@example.com again';
    const verdicts = await check(['', first, 'nothing here', 'bob@corp.example.org']);
    expect(verdicts).toEqual([
      { findings: [] },
      {
        findings: [
          { category: 'email', start: 8, end: 23 },
          { category: 'email', start: 44, end: 59 },
          { category: 'employee_id', start: 27, end: 37 },
        ],
      },
      { findings: [] },
      { findings: [{ category: 'email', start: 0, end: 20 }] },
    ]);
    expect(first.slice(8, 23)).toBe('ana@example.com');
    expect(first.slice(27, 37)).toBe('EMP-123456');
    expect(first.slice(44, 59)).toBe('ana@example.com');
    expect(fake.requests).toHaveLength(1);
    const sent = fake.last();
    expect(sent.path).toBe(`/guardrail/${FAKE_GUARDRAIL.identifier}/version/1/apply`);
    expect(sent.body).toEqual({
      source: 'INPUT',
      content: [{ text: { text: first } }, { text: { text: 'nothing here' } }, { text: { text: 'bob@corp.example.org' } }],
    });
    // Signed with the provider's key (the fake verified the signature), which no verdict carries.
    expect(sent.headers.authorization).toContain(`Credential=${BEDROCK_CREDENTIALS.accessKeyId}/`);
    expect(JSON.stringify(verdicts)).not.toContain(BEDROCK_CREDENTIALS.accessKeyId);
  });

  it('flags a denied topic, a content filter and a custom word (on the first text sent); source OUTPUT for answers', async () => {
    const verdicts = await check(['', `Here is some ${GUARDRAIL_PLANTS.topic}.`, `${GUARDRAIL_PLANTS.violence} and ${GUARDRAIL_PLANTS.word}`], 'output');
    expect(verdicts).toEqual([{ findings: [] }, { findings: [], flagged: ['investment advice', 'violence', 'custom_word'] }, { findings: [] }]);
    expect(fake.last().body.source).toBe('OUTPUT');
  });

  it('counts what a detect-mode policy detected (action NONE, detected true) and a blocking PII entity', async () => {
    const text = 'Call +1-555-010-9999, SSN 123-45-6789.';
    expect(await check([text])).toEqual([
      {
        findings: [
          { category: 'us_social_security_number', start: 26, end: 37 },
          { category: 'phone', start: 5, end: 20 },
        ],
      },
    ]);
  });

  it('passes a clean text, and an ARN identifier is encoded in the signed path', async () => {
    expect(await check(['a clean text'], 'input', { guardrailIdentifier: FAKE_GUARDRAIL.arn, guardrailVersion: 'DRAFT' })).toEqual([{ findings: [] }]);
    expect(fake.last().url).toBe(`/guardrail/${encodeURIComponent(FAKE_GUARDRAIL.arn)}/version/DRAFT/apply`);
  });

  it('makes no call when every text is empty', async () => {
    expect(await check(['', ''])).toEqual([{ findings: [] }, { findings: [] }]);
    expect(fake.requests).toHaveLength(0);
  });

  it('flags a value it cannot find back, and an intervention with no entry it knows', async () => {
    const answer = (assessments: unknown[]) => JSON.stringify({ action: 'GUARDRAIL_INTERVENED', outputs: [], assessments });
    fake.replyGuardrail(
      { raw: answer([{ sensitiveInformationPolicy: { piiEntities: [{ match: 'not in the text', type: 'NAME', action: 'ANONYMIZED', detected: true }] } }]) },
      { raw: answer([{ automatedReasoningPolicy: { findings: [{}] } }]) },
      // No `detected` (an older answer): the action says it.
      {
        raw: answer([
          {
            contentPolicy: {
              filters: [
                { type: 'HATE', confidence: 'HIGH', action: 'BLOCKED' },
                { type: 'SEXUAL', action: 'NONE' },
              ],
            },
          },
        ]),
      },
    );
    expect(await check(['some text'])).toEqual([{ findings: [], flagged: ['name'] }]);
    expect(await check(['some text'])).toEqual([{ findings: [], flagged: ['guardrail_intervened'] }]);
    expect(await check(['some text'])).toEqual([{ findings: [], flagged: ['hate'] }]);
  });

  it('ignores what the full output scope lists as not detected', async () => {
    fake.replyGuardrail({
      raw: JSON.stringify({
        action: 'NONE',
        outputs: [],
        assessments: [{ contentPolicy: { filters: [{ type: 'HATE', confidence: 'NONE', action: 'NONE', detected: false }] } }],
      }),
    });
    expect(await check(['some text'])).toEqual([{ findings: [] }]);
  });

  it('refuses a wrong secret: the fake finds the signature wrong, and the check throws', async () => {
    const wrong = createBedrockProvider({
      baseURL: fake.url,
      region: BEDROCK_REGION,
      ...BEDROCK_CREDENTIALS,
      secretAccessKey: 'wrong/secret/KEY/000000000000000000000000',
    });
    try {
      const failure = await Promise.resolve(bedrockGuardrailChecker(spec(), wrong).check(['hello'], context())).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(GuardrailCheckError);
      expect(fake.requests[0]!.rejected).toMatchObject({ status: 403, message: expect.stringContaining('signature we calculated does not match') });
    } finally {
      await wrong.close?.();
    }
  });

  it('stops the call when the signal aborts (the engine’s timeout)', async () => {
    fake.replyGuardrail({ hang: true });
    const controller = new AbortController();
    const checking = Promise.resolve(bedrockGuardrailChecker(spec(), provider).check(['hello'], context('input', controller.signal)));
    await expect.poll(() => fake.requests.length).toBe(1);
    controller.abort();
    await expect(checking).rejects.toMatchObject({ name: 'AbortError' });
    await fake.requests[0]!.closed;
    expect(fake.requests[0]!.closedEarly).toBe(true);
  });

  // Bedrock's 500 is the gateway's 502, as for any Bedrock call.
  it.each([
    [500, 'InternalServerException', 502],
    [400, 'ValidationException', 400],
  ])('throws on an error status %i without the text or Bedrock’s message', async (upstreamStatus, type, status) => {
    const secret = 'secret-text-ana@example.com';
    fake.replyGuardrail({ error: { status: upstreamStatus, type, message: `Value '${secret}' failed` } });
    const failure = await check([secret]).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(GuardrailCheckError);
    expect(failure).toMatchObject({ status });
    expect((failure as Error).message).toContain(type);
    expect((failure as Error).message).not.toContain(secret);
  });

  it('throws for a guardrail Bedrock does not have (404)', async () => {
    await expect(check(['hello'], 'input', { guardrailVersion: '7' })).rejects.toMatchObject({ status: 404 });
  });

  it('throws on an answer it cannot read', async () => {
    fake.replyGuardrail(
      { raw: JSON.stringify({ action: 'MAYBE', assessments: [] }) },
      { raw: JSON.stringify({ action: 'NONE' }) },
      { raw: JSON.stringify({ action: 'NONE', assessments: ['x'] }) },
    );
    for (let attempt = 0; attempt < 3; attempt++) await expect(check(['hello'])).rejects.toBeInstanceOf(GuardrailCheckError);
  });

  it('is refused at build time for a provider that cannot apply guardrails', () => {
    expect(() => bedrockGuardrailChecker(spec(), { type: 'openai', version: 2 })).toThrow(/provider "aws" \(openai\) cannot apply Bedrock guardrails/);
  });
});

describe('the fake ApplyGuardrail', () => {
  it('refuses what Bedrock refuses: a bad source, empty content, an extra key, two members in a block, a bad version', async () => {
    const apply = provider.moderation!.applyGuardrail!;
    const call = { signal: new AbortController().signal, requestId: 'r' };
    const base = { guardrailIdentifier: FAKE_GUARDRAIL.identifier, guardrailVersion: '1', source: 'INPUT' as const, content: [{ text: { text: 'x' } }] };
    await expect(apply({ ...base, source: 'BOTH' as 'INPUT' }, call)).rejects.toMatchObject({ status: 400 });
    await expect(apply({ ...base, content: [] }, call)).rejects.toMatchObject({ status: 400 });
    await expect(apply({ ...base, guardrailVersion: 'v1' }, call)).rejects.toMatchObject({ status: 400 });
    await expect(apply({ ...base, guardrailIdentifier: 'UPPER' }, call)).rejects.toMatchObject({ status: 400 });
    expect(fake.requests.map((request) => request.rejected?.status)).toEqual([400, 400, 400, 400]);
    expect(await apply(base, call)).toMatchObject({ action: 'NONE', outputs: [] });
  });
});
