import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openAIModerationChecker } from '../../src/guardrails/adapters/openai-moderation.js';
import { GuardrailCheckError } from '../../src/guardrails/adapters/remote-check.js';
import type { CheckContext } from '../../src/guardrails/checker.js';
import type { GuardrailSpecOf } from '../../src/guardrails/guardrail-schema.js';
import { createOpenAIProvider } from '../../src/providers/openai/openai-provider.js';
import type { Provider } from '../../src/providers/provider.js';
import { MODERATION_MARKERS, startFakeModeration } from '../fakes/fake-openai-moderation.js';
import type { FakeUpstream } from '../fakes/fake-server.js';

/**
 * The `openai-moderation` guardrail against a fake `/v1/moderations` as strict as OpenAI's: one
 * call per check with the texts as `input`, the provider's key on it, verdicts from the results.
 */
let fake: FakeUpstream;
let provider: Provider;

beforeAll(async () => {
  fake = await startFakeModeration({ apiKey: 'sk-upstream-moderation-key' });
  provider = createOpenAIProvider({ baseURL: `${fake.url}/v1`, apiKey: 'sk-upstream-moderation-key' });
});
afterAll(async () => {
  await provider.close?.();
  await fake.close();
});
beforeEach(() => fake.reset());

const spec = (extra: Partial<GuardrailSpecOf<'openai-moderation'>> = {}): GuardrailSpecOf<'openai-moderation'> => ({
  type: 'openai-moderation',
  name: 'mod',
  provider: 'oai',
  ...extra,
});
const context = (signal = new AbortController().signal): CheckContext => ({ phase: 'input', signal, requestId: 'req-1', model: 'gpt-test' });

describe('openAIModerationChecker', () => {
  it('sends the non-empty texts in one call as `input` with the default model, and flags per result', async () => {
    const checker = openAIModerationChecker(spec(), provider);
    const texts = ['hello there', '', `I will ${MODERATION_MARKERS.violence} you`, `${MODERATION_MARKERS.harassment} and ${MODERATION_MARKERS.violence}`];
    const verdicts = await checker.check(texts, context());
    expect(verdicts).toEqual([
      { findings: [] },
      { findings: [] },
      { findings: [], flagged: ['violence'] },
      { findings: [], flagged: ['harassment', 'violence'] },
    ]);
    expect(checker.canMask).toBe(false);
    expect(fake.requests).toHaveLength(1);
    const sent = fake.last();
    expect(sent.path).toBe('/v1/moderations');
    expect(sent.body).toEqual({ model: 'omni-moderation-latest', input: [texts[0], texts[2], texts[3]] });
    expect(sent.headers.authorization).toBe('Bearer sk-upstream-moderation-key');
    expect(JSON.stringify(verdicts)).not.toContain('sk-upstream');
  });

  it('makes no call when every text is empty', async () => {
    const verdicts = await openAIModerationChecker(spec(), provider).check(['', ''], context());
    expect(verdicts).toEqual([{ findings: [] }, { findings: [] }]);
    expect(fake.requests).toHaveLength(0);
  });

  it('sends the configured model and counts only the configured categories', async () => {
    const checker = openAIModerationChecker(spec({ model: 'text-moderation-stable', categories: ['harassment'] }), provider);
    const verdicts = await checker.check([`${MODERATION_MARKERS.harassment} ${MODERATION_MARKERS.violence}`, MODERATION_MARKERS.violence], context());
    expect(verdicts).toEqual([{ findings: [], flagged: ['harassment'] }, { findings: [] }]);
    expect(fake.last().body.model).toBe('text-moderation-stable');
  });

  it('with scoreThreshold, counts a category by its score instead of the endpoint’s own flag', async () => {
    const low = openAIModerationChecker(spec({ scoreThreshold: 0.4 }), provider);
    expect(await low.check([`a ${MODERATION_MARKERS.borderline} text`], context())).toEqual([{ findings: [], flagged: ['violence'] }]);
    const high = openAIModerationChecker(spec({ scoreThreshold: 0.95 }), provider);
    expect(await high.check([MODERATION_MARKERS.violence], context())).toEqual([{ findings: [] }]);
    // Without a threshold, the borderline score is not flagged by the endpoint.
    expect(await openAIModerationChecker(spec(), provider).check([MODERATION_MARKERS.borderline], context())).toEqual([{ findings: [] }]);
  });

  it('stops the call when the signal aborts (the engine’s timeout)', async () => {
    fake.reply({ hang: true });
    const controller = new AbortController();
    const checking = openAIModerationChecker(spec(), provider).check(['hello'], context(controller.signal));
    await expect.poll(() => fake.requests.length).toBe(1);
    controller.abort();
    await expect(checking).rejects.toMatchObject({ name: 'AbortError' });
    await fake.requests[0]!.closed;
    expect(fake.requests[0]!.closedEarly).toBe(true);
  });

  it.each([400, 500])('throws on an error status %i, without the text or the service’s message', async (status) => {
    const secret = 'my-private-text-4111';
    fake.reply({ error: { status, message: `boom on ${secret}` } });
    const failure = await Promise.resolve(openAIModerationChecker(spec(), provider).check([secret], context())).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(GuardrailCheckError);
    expect(failure).toMatchObject({ guardrail: 'mod', status });
    expect(String((failure as Error).message)).not.toContain(secret);
    expect(String((failure as Error).message)).not.toContain('boom');
  });

  it('throws when the upstream refuses the provider’s key (its 401 is the gateway’s 502)', async () => {
    const wrongKey = createOpenAIProvider({ baseURL: `${fake.url}/v1`, apiKey: 'sk-wrong-key-000000' });
    try {
      await expect(openAIModerationChecker(spec(), wrongKey).check(['hello'], context())).rejects.toMatchObject({ status: 502 });
      expect(fake.requests[0]!.rejected?.status).toBe(401);
    } finally {
      await wrongKey.close?.();
    }
  });

  it('throws on an answer it cannot read: a result missing, or no categories', async () => {
    const checker = openAIModerationChecker(spec(), provider);
    fake.reply({ raw: JSON.stringify({ id: 'modr-1', model: 'omni-moderation-2024-09-26', results: [] }) });
    await expect(checker.check(['a', 'b'], context())).rejects.toThrow(/0 results for 2 inputs/);
    fake.reply({ raw: JSON.stringify({ id: 'modr-1', model: 'omni-moderation-2024-09-26', results: [{ flagged: true }] }) });
    await expect(checker.check(['a'], context())).rejects.toBeInstanceOf(GuardrailCheckError);
    fake.reply({ raw: JSON.stringify(['not', 'an', 'answer']) });
    await expect(checker.check(['a'], context())).rejects.toBeInstanceOf(GuardrailCheckError);
  });

  it('is refused at build time for a provider without a moderation endpoint', () => {
    const bare: Provider = { type: 'custom', version: 2 };
    expect(() => openAIModerationChecker(spec(), bare)).toThrow(/provider "oai" \(custom\) has no moderation endpoint/);
  });
});

describe('the fake moderation endpoint', () => {
  const post = (body: unknown, key = 'sk-upstream-moderation-key') =>
    fetch(`${fake.url}/v1/moderations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  it('refuses what OpenAI refuses: no input, an empty array, an unknown field or model, mixed input, a wrong key', async () => {
    for (const [body, status] of [
      [{}, 400],
      [{ input: [] }, 400],
      [{ input: 'x', user: 'u' }, 400],
      [{ input: 'x', model: 'gpt-4.1' }, 404],
      [{ input: ['x', { type: 'text', text: 'y' }] }, 400],
      [{ input: [{ type: 'image_url', image_url: { url: 'https://x/y.png' } }], model: 'text-moderation-latest' }, 400],
    ] as const) {
      expect((await post(body)).status, JSON.stringify(body)).toBe(status);
    }
    expect((await post({ input: 'x' }, 'sk-other')).status).toBe(401);
  });

  it('answers every category of the model for each input', async () => {
    const answer = (await (await post({ input: ['a', MODERATION_MARKERS.violence] })).json()) as any;
    expect(answer.model).toBe('omni-moderation-2024-09-26');
    expect(answer.results).toHaveLength(2);
    expect(Object.keys(answer.results[0].categories)).toHaveLength(13);
    expect(answer.results[1]).toMatchObject({ flagged: true, categories: { violence: true }, category_applied_input_types: { violence: ['text'] } });
  });
});
