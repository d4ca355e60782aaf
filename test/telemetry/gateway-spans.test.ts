import { propagation, SpanKind } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import OpenAI from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createGateway, type Gateway } from '../../src/gateway.js';
import { createOpenAIProvider } from '../../src/providers/openai/openai-provider.js';
import { startFakeOpenAI } from '../fakes/fake-openai.js';
import type { FakeUpstream } from '../fakes/fake-server.js';
import { serve, type Served } from '../helpers/serve.js';

/**
 * Telemetry through the whole gateway: a request that fails over twice becomes one SERVER span
 * with three CLIENT attempt spans in the caller's trace, and neither spans nor log lines carry
 * a key or the prompt.
 */
const CLIENT_KEY = 'sk-client-SECRET-4242';
const UPSTREAM_KEY = 'up-SECRET-upstream-9191';
const PROMPT = 'my private prompt about the merger';
const exporter = new InMemorySpanExporter();
const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer('test');
const logLines: string[] = [];
let first: FakeUpstream;
let second: FakeUpstream;
let gateway: Gateway;
let served: Served;

beforeAll(async () => {
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  [first, second] = await Promise.all([
    startFakeOpenAI({ endpoints: ['chat'], apiKey: UPSTREAM_KEY }),
    startFakeOpenAI({ endpoints: ['chat'], apiKey: UPSTREAM_KEY }),
  ]);
  const capture = (level: string) => (message: string, fields?: Record<string, unknown>) => void logLines.push(JSON.stringify({ level, message, ...fields }));
  gateway = createGateway({
    keys: [{ key: CLIENT_KEY, id: 'team-a' }],
    providers: {
      first: createOpenAIProvider({ baseURL: first.url + '/v1', apiKey: UPSTREAM_KEY, responses: false }),
      second: createOpenAIProvider({ baseURL: second.url + '/v1', apiKey: UPSTREAM_KEY, responses: false }),
    },
    models: [
      {
        id: 'gpt',
        deployments: [
          { id: 'first', provider: 'first', upstreamModel: 'gpt-4.1' },
          { id: 'second', provider: 'second', upstreamModel: 'gpt-5' },
        ],
      },
    ],
    policies: { retry: { backoffMs: 1, retries: 2 } },
    telemetry: { tracer },
    accessLog: true,
    logger: { info: capture('info'), warn: capture('warn'), error: capture('error') },
  });
  served = await serve(gateway);
});
afterAll(async () => {
  await served.close();
  await Promise.all([first.close(), second.close()]);
  await Promise.all(Object.values(gateway.options.providers).map((provider) => provider.close?.()));
});

it('one SERVER span and a CLIENT span per attempt, in the caller’s trace, with the GenAI attributes and no secrets', async () => {
  // Both fail once: the first two attempts fail, the third (back on the first deployment) answers.
  first.reply({ error: { status: 500, message: 'internal', type: 'server_error' } }, { text: ['Fine.'], usage: { input: 11, output: 3 } });
  second.reply({ error: { status: 500, message: 'internal', type: 'server_error' } }, { text: ['Fine.'], usage: { input: 11, output: 3 } });
  const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
  const openai = new OpenAI({ baseURL: served.url + '/v1', apiKey: CLIENT_KEY, maxRetries: 0 });
  const completion = await openai.chat.completions.create(
    { model: 'gpt', messages: [{ role: 'user', content: PROMPT }] },
    { headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` } },
  );
  expect(completion.choices[0]!.message.content).toBe('Fine.');

  await expect.poll(() => exporter.getFinishedSpans().length).toBe(4);
  const spans = exporter.getFinishedSpans();
  const server = spans.filter((span) => span.kind === SpanKind.SERVER);
  const clients = spans.filter((span) => span.kind === SpanKind.CLIENT);
  expect(server).toHaveLength(1);
  expect(clients).toHaveLength(3);
  expect(server[0]!.name).toBe('chat gpt');
  expect(server[0]!.spanContext().traceId).toBe(traceId);
  for (const span of clients) expect(span.parentSpanContext?.spanId).toBe(server[0]!.spanContext().spanId);
  expect(server[0]!.attributes).toMatchObject({
    'gen_ai.operation.name': 'chat',
    'gen_ai.request.model': 'gpt',
    'gen_ai.usage.input_tokens': 11,
    'gen_ai.usage.output_tokens': 3,
    'infergate.attempts': 3,
    'infergate.key_id': 'team-a',
  });
  expect(clients.map((span) => span.attributes['infergate.attempt.outcome'])).toEqual(['error', 'error', 'ok']);

  await expect.poll(() => logLines.some((line) => line.includes('"message":"request"'))).toBe(true);
  const everything =
    JSON.stringify(spans.map((span) => ({ name: span.name, attributes: span.attributes, events: span.events, status: span.status }))) + logLines.join('\n');
  for (const secret of [CLIENT_KEY, UPSTREAM_KEY, PROMPT, first.url, second.url]) expect(everything).not.toContain(secret);
});
