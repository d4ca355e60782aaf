import OpenAI from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createGateway } from '../../src/gateway.js';
import { metricsHandler, type MetricsHandler } from '../../src/metrics.js';
import { createOpenAIProvider } from '../../src/providers/openai/openai-provider.js';
import { startFakeOpenAI } from '../fakes/fake-openai.js';
import type { FakeUpstream } from '../fakes/fake-server.js';
import { sample } from '../helpers/prometheus.js';
import { recordingLogger } from '../helpers/recording-logger.js';
import { serve, type Served } from '../helpers/serve.js';

/**
 * The guardrails' outcomes from a real request to what operators read: the engine reports them on
 * the usage event, the access log line and the metrics show them, and neither holds the value.
 */
const KEY = 'sk-guarded-client';
const EMAIL = 'jane.doe@example.com';
let upstream: FakeUpstream;
let served: Served;
let metrics: MetricsHandler;
const { logger, lines } = recordingLogger();

beforeAll(async () => {
  upstream = await startFakeOpenAI({ endpoints: ['chat'], apiKey: 'up' });
  metrics = metricsHandler();
  const gateway = createGateway({
    keys: [{ key: KEY, id: 'team-a' }],
    providers: { openai: createOpenAIProvider({ baseURL: upstream.url + '/v1', apiKey: 'up', responses: false }) },
    models: [{ id: 'gpt', provider: 'openai', upstreamModel: 'gpt-4.1' }],
    policies: {
      guardrails: [
        { type: 'pii', name: 'contacts', action: 'mask', phase: 'input' },
        { type: 'secrets', phase: 'output' },
      ],
    },
    metrics: { meterProvider: metrics.meterProvider },
    accessLog: true,
    logger,
  });
  served = await serve(gateway);
});
afterAll(async () => {
  await served.close();
  await upstream.close();
  await metrics.shutdown();
});

it('a masked prompt shows on the access log and in the metrics by guardrail, phase and outcome, without the value', async () => {
  upstream.reply({ text: ['Noted.'], usage: { input: 9, output: 2 } });
  const openai = new OpenAI({ baseURL: served.url + '/v1', apiKey: KEY, maxRetries: 0 });
  await openai.chat.completions.create({ model: 'gpt', messages: [{ role: 'user', content: `Write to ${EMAIL} today.` }] });
  expect(JSON.stringify(upstream.requests.at(-1)?.body)).toContain('[REDACTED:email]');

  // Written after the answer: wait for them.
  await expect.poll(() => lines.filter((line) => line.message === 'request').length).toBe(1);
  const line = lines.find((entry) => entry.message === 'request')!;
  expect(line.fields?.guardrails).toEqual(['contacts:input:masked:email', 'secrets:output:passed']);

  let text = '';
  const checks = (name: string, phase: string, outcome: string) =>
    sample(text, 'infergate_guardrail_checks_total', {
      infergate_guardrail_name: name,
      infergate_guardrail_phase: phase,
      infergate_guardrail_outcome: outcome,
    });
  await expect
    .poll(async () => {
      text = await metrics.text();
      return checks('contacts', 'input', 'masked');
    })
    .toBe(1);
  expect(checks('secrets', 'output', 'passed')).toBe(1);
  expect(sample(text, 'infergate_guardrail_duration_count', { infergate_guardrail_name: 'contacts' })).toBe(1);
  for (const written of [JSON.stringify(lines), text]) expect(written).not.toContain(EMAIL);
});
