import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { expect, it } from 'vitest';
import { createGateway } from '../../src/gateway.js';
import { localModels } from '../../src/providers/local/local-provider.js';

/** The request span carries the dollars of the usage event (the attribute mapping itself: test/telemetry/otel-observer.test.ts). */
it('the request span has infergate.cost_usd and infergate.price_source', async () => {
  const exporter = new InMemorySpanExporter();
  const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer('test');
  const costs: number[] = [];
  const gateway = createGateway({
    keys: [{ key: 'sk-test' }],
    models: localModels('local').map((model) => ({ ...model, price: { input: 3, output: 15 } })),
    telemetry: { tracer },
    logger: false,
    hooks: { onUsage: (event) => void costs.push(event.costUsd) },
  });
  const response = await gateway.fetch('http://gateway/v1/chat/completions', {
    method: 'POST',
    headers: { authorization: 'Bearer sk-test', 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'local-chat', messages: [{ role: 'user', content: 'hello' }] }),
  });
  expect(response.status).toBe(200);
  await response.text();
  await expect.poll(() => exporter.getFinishedSpans().find((span) => span.attributes['infergate.cost_usd'] !== undefined)).toBeDefined();
  const span = exporter.getFinishedSpans().find((candidate) => candidate.attributes['infergate.cost_usd'] !== undefined)!;
  expect(costs).toHaveLength(1);
  expect(costs[0]).toBeGreaterThan(0);
  expect(span.attributes).toMatchObject({ 'infergate.cost_usd': costs[0], 'infergate.price_source': 'config', 'gen_ai.request.model': 'local-chat' });
  await gateway.dispose();
});

it('a response-cache hit is marked cached in the span and the access log, at $0', async () => {
  const exporter = new InMemorySpanExporter();
  const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer('test');
  const logged: Record<string, unknown>[] = [];
  const gateway = createGateway({
    keys: [{ key: 'sk-test' }],
    models: localModels('local').map((model) => ({ ...model, price: { input: 3, output: 15 }, cache: true })),
    responseCache: true,
    telemetry: { tracer },
    accessLog: true,
    logger: { info: (message, fields) => void (message === 'request' && logged.push(fields ?? {})), warn() {}, error() {} },
  });
  const ask = async () => {
    const response = await gateway.fetch('http://gateway/v1/chat/completions', {
      method: 'POST',
      headers: { authorization: 'Bearer sk-test', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'local-chat', temperature: 0, messages: [{ role: 'user', content: 'hello' }] }),
    });
    await response.text();
    return response.headers.get('x-infergate-cache');
  };
  expect(await ask()).toBe('miss');
  expect(await ask()).toBe('hit');
  await expect.poll(() => logged.length).toBe(2);
  expect(logged[0]!.cached).toBeUndefined();
  expect(logged[1]).toMatchObject({ cached: true, costUsd: 0 });
  await expect.poll(() => exporter.getFinishedSpans().filter((span) => span.attributes['infergate.cost_usd'] !== undefined).length).toBe(2);
  const spans = exporter.getFinishedSpans().filter((span) => span.attributes['infergate.cost_usd'] !== undefined);
  expect(spans.map((span) => span.attributes['infergate.cached'])).toEqual([undefined, true]);
  await gateway.dispose();
});
