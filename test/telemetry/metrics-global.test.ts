import { metrics } from '@opentelemetry/api';
import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { afterAll, expect, it } from 'vitest';
import { createGateway } from '../../src/gateway.js';

/** `metrics: true`: the host's OpenTelemetry SDK (its global meter provider) gets the gateway's metrics. */
const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
const provider = new MeterProvider({ readers: [reader] });
metrics.setGlobalMeterProvider(provider);
afterAll(() => provider.shutdown());

it('records into the global meter provider, under the scope `infergate`, and says the overhead on the answer', async () => {
  const gateway = createGateway({ keys: [{ key: 'sk-a' }], metrics: true, logger: false });
  const response = await gateway.fetch('http://gateway.test/v1/chat/completions', {
    method: 'POST',
    headers: { authorization: 'Bearer sk-a', 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'local-chat', messages: [{ role: 'user', content: 'Hi' }] }),
  });
  expect(response.status).toBe(200);
  expect(response.headers.get('x-infergate-overhead-ms')).toMatch(/^\d+\.\d\d$/);
  await expect
    .poll(async () => {
      exporter.reset();
      await reader.forceFlush();
      const scopes = exporter.getMetrics().flatMap((resource) => resource.scopeMetrics);
      return scopes.filter((scope) => scope.scope.name === 'infergate').flatMap((scope) => scope.metrics.map((metric) => metric.descriptor.name));
    })
    .toEqual(expect.arrayContaining(['gen_ai.server.request.duration', 'gen_ai.client.token.usage', 'infergate.overhead', 'infergate.upstream.attempts']));
});

it('sends no overhead header with metrics off', async () => {
  const gateway = createGateway({ keys: [{ key: 'sk-a' }], logger: false });
  const response = await gateway.fetch('http://gateway.test/v1/models', { headers: { authorization: 'Bearer sk-a' } });
  expect(response.headers.has('x-infergate-overhead-ms')).toBe(false);
});
