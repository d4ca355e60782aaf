import { expect, it } from 'vitest';
import { createGateway } from '../../src/gateway.js';
import type { RefusalEvent } from '../../src/policy/events.js';
import { createOpenAIProvider } from '../../src/providers/openai/openai-provider.js';

/** The `onRefused` stage: one event per request the key's admission refused, saying which limit did. */
it('tells each refusal with its reason, status and code; an admitted request is no refusal', async () => {
  const refused: RefusalEvent[] = [];
  const gateway = createGateway({
    keys: [
      { key: 'sk-broke', id: 'broke', balance: 0 },
      { key: 'sk-one', id: 'one', limits: { concurrentRequests: 1 } },
      { key: 'sk-budget', id: 'budget', budget: { usd: 1 } },
    ],
    // No request reaches it: the ones admitted find nothing listening (a 502).
    providers: { house: createOpenAIProvider({ baseURL: 'http://127.0.0.1:9/v1', apiKey: 'up' }) },
    models: [{ id: 'house', provider: 'house', upstreamModel: 'house-model-without-a-price' }],
    plugins: [{ onRefused: (event) => void refused.push(event) }],
    logger: false,
  });
  const ask = (key: string) =>
    gateway.fetch('http://gateway.test/v1/chat/completions', {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'house', messages: [{ role: 'user', content: 'hi' }] }),
    });

  expect((await ask('sk-broke')).status).toBe(429);
  expect((await ask('sk-budget')).status).toBe(403);
  expect((await ask('sk-one')).status).not.toBe(429);
  await expect.poll(() => refused.length).toBe(2);
  expect(refused).toEqual([
    { requestId: expect.stringMatching(/^req_/), keyId: 'broke', reason: 'balance', status: 429, code: 'insufficient_quota' },
    { requestId: expect.stringMatching(/^req_/), keyId: 'budget', reason: 'unpriced', status: 403, code: 'model_unpriced' },
  ]);
});
