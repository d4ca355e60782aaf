import {
  AggregationTemporality,
  DataPointType,
  InMemoryMetricExporter,
  MeterProvider,
  type MetricData,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import OpenAI from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createGateway, type Gateway } from '../../src/gateway.js';
import { createOpenAIProvider } from '../../src/providers/openai/openai-provider.js';
import { startFakeOpenAI } from '../fakes/fake-openai.js';
import type { FakeUpstream } from '../fakes/fake-server.js';
import { withinOneMinute } from '../helpers/rate-window.js';
import { serve, type Served } from '../helpers/serve.js';

/**
 * Metrics through the whole gateway, read by an OpenTelemetry in-memory exporter: real requests
 * (a retried one, a stream, a cache miss and hit, a rate-limit refusal) to loopback upstreams,
 * then every instrument with the attributes docs/metrics.md lists for it.
 */
const KEY = 'sk-metrics-client';
const LIMITED_KEY = 'sk-metrics-limited';
const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
const meterProvider = new MeterProvider({ readers: [reader] });
let first: FakeUpstream;
let second: FakeUpstream;
let gateway: Gateway;
let served: Served;

beforeAll(async () => {
  [first, second] = await Promise.all([startFakeOpenAI({ endpoints: ['chat'], apiKey: 'up' }), startFakeOpenAI({ endpoints: ['chat'], apiKey: 'up' })]);
  gateway = createGateway({
    keys: [
      { key: KEY, id: 'team-a' },
      { key: LIMITED_KEY, id: 'team-b', limits: { requestsPerMinute: 1 } },
    ],
    providers: {
      first: createOpenAIProvider({ baseURL: first.url + '/v1', apiKey: 'up', responses: false }),
      second: createOpenAIProvider({ baseURL: second.url + '/v1', apiKey: 'up', responses: false }),
    },
    models: [
      { id: 'gpt', provider: 'first', upstreamModel: 'gpt-4.1', price: { input: 2, output: 8 } },
      { id: 'wild/*', provider: 'second', upstreamModel: 'gpt-5' },
    ],
    // One deployment, tried again once after a failure.
    policies: { retry: { retries: 1, backoffMs: 1 } },
    responseCache: true,
    metrics: { meterProvider },
    logger: false,
  });
  served = await serve(gateway);
});
afterAll(async () => {
  await served.close();
  await Promise.all([first.close(), second.close()]);
  await meterProvider.shutdown();
});

it('records every instrument with its documented attributes', async () => {
  const openai = new OpenAI({ baseURL: served.url + '/v1', apiKey: KEY, maxRetries: 0 });
  // 1. The first attempt fails, the second answers.
  first.reply({ error: { status: 500, message: 'internal', type: 'server_error' } }, { text: ['Fine.'], usage: { input: 11, output: 3 } });
  const retried = await openai.chat.completions.create({ model: 'gpt', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
  // The gateway's own time, less the upstream's and the back-off: a number of ms, on every answer.
  expect(retried.response.headers.get('x-infergate-overhead-ms')).toMatch(/^\d+\.\d\d$/);
  // 2. A stream, for time to first token and time per output token.
  first.reply({ text: ['One', ' two', ' three'], usage: { input: 5, output: 3 } });
  const { data: stream, response: streamed } = await openai.chat.completions
    .create({ model: 'gpt', stream: true, messages: [{ role: 'user', content: 'count' }] })
    .withResponse();
  expect(streamed.headers.get('x-infergate-overhead-ms')).toMatch(/^\d+\.\d\d$/);
  for await (const _ of stream);
  // 3. The same cacheable request twice: a miss, then a hit.
  const cached = { model: 'gpt', temperature: 0, messages: [{ role: 'user' as const, content: 'cache me' }] };
  first.reply({ text: ['Kept.'], usage: { input: 4, output: 2 } });
  await openai.chat.completions.create(cached, { headers: { 'x-infergate-cache': 'on' } });
  const hit = await openai.chat.completions.create(cached, { headers: { 'x-infergate-cache': 'on' } }).withResponse();
  expect(hit.response.headers.get('x-infergate-cache')).toBe('hit');
  // 4. A model a wildcard entry serves: labelled by its pattern, not the client's name.
  second.reply({ text: ['Wild.'], usage: { input: 1, output: 1 } });
  await openai.chat.completions.create({ model: 'wild/anything-a-client-types', messages: [{ role: 'user', content: 'hi' }] });
  // 5. A key over its requests per minute: the second request is refused.
  await withinOneMinute();
  const limited = new OpenAI({ baseURL: served.url + '/v1', apiKey: LIMITED_KEY, maxRetries: 0 });
  first.reply({ text: ['Once.'] });
  await limited.chat.completions.create({ model: 'gpt', messages: [{ role: 'user', content: 'hi' }] });
  await expect(limited.chat.completions.create({ model: 'gpt', messages: [{ role: 'user', content: 'hi' }] })).rejects.toMatchObject({ status: 429 });

  const metrics = await collected(
    ['gen_ai.server.request.duration', 'infergate.admission.refusals', 'infergate.cache.lookups'],
    (all) => points(all, 'gen_ai.server.request.duration').reduce((sum, point) => sum + count(point), 0) >= 6,
  );
  const gpt = { 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'openai', 'gen_ai.request.model': 'gpt' };

  const durations = points(metrics, 'gen_ai.server.request.duration');
  expect(durations.map((point) => point.attributes)).toContainEqual({ ...gpt, 'gen_ai.response.model': 'gpt-4.1' });
  expect(durations.map((point) => point.attributes)).toContainEqual({ ...gpt, 'gen_ai.request.model': 'wild/*', 'gen_ai.response.model': 'wild/*' });
  expect(JSON.stringify(metrics)).not.toContain('anything-a-client-types');
  expect(descriptor(metrics, 'gen_ai.server.request.duration')).toMatchObject({ unit: 's' });
  expect(boundaries(metrics, 'gen_ai.server.request.duration')).toEqual([
    0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
  ]);

  // Four upstream answers on gpt-4.1 (the retried one, the stream, the cache miss, the limited key's; its
  // default usage is 12 in, 4 out), none for the cache hit; one on the wildcard.
  const tokens = points(metrics, 'gen_ai.client.token.usage');
  const onGpt = { ...gpt, 'gen_ai.response.model': 'gpt-4.1' };
  expect(tokens.find((point) => matches(point, { ...onGpt, 'gen_ai.token.type': 'input' }))?.value).toMatchObject({ sum: 11 + 5 + 4 + 12, count: 4 });
  expect(tokens.find((point) => matches(point, { ...onGpt, 'gen_ai.token.type': 'output' }))?.value).toMatchObject({ sum: 3 + 3 + 2 + 4, count: 4 });
  const wild = { ...gpt, 'gen_ai.request.model': 'wild/*', 'gen_ai.response.model': 'wild/*' };
  expect(tokens.find((point) => matches(point, { ...wild, 'gen_ai.token.type': 'output' }))?.value).toMatchObject({ sum: 1, count: 1 });
  expect(boundaries(metrics, 'gen_ai.client.token.usage')?.slice(0, 3)).toEqual([1, 4, 16]);

  expect(points(metrics, 'gen_ai.server.time_to_first_token').map((point) => point.attributes)).toEqual([onGpt]);
  expect(count(points(metrics, 'gen_ai.server.time_to_first_token')[0]!)).toBe(1);
  expect(points(metrics, 'gen_ai.server.time_per_output_token').map((point) => point.attributes)).toEqual([onGpt]);

  const attempts = points(metrics, 'infergate.upstream.attempts');
  const upstream = { 'gen_ai.provider.name': 'openai', 'gen_ai.request.model': 'gpt' };
  expect(attempts.find((point) => point.attributes['infergate.attempt.outcome'] === 'error')).toMatchObject({
    attributes: { ...upstream, 'infergate.attempt.outcome': 'error', 'error.type': '500' },
    value: 1,
  });
  // The retried request's second attempt, the stream, the cache miss and the limited key's request.
  expect(attempts.find((point) => matches(point, { ...upstream, 'infergate.attempt.outcome': 'ok' }))?.value).toBe(4);
  expect(points(metrics, 'infergate.upstream.fallbacks')).toEqual([
    expect.objectContaining({ attributes: { 'gen_ai.provider.name': 'openai', 'gen_ai.request.model': 'gpt', 'error.type': '500' }, value: 1 }),
  ]);

  expect(points(metrics, 'infergate.admission.refusals')).toEqual([
    expect.objectContaining({
      attributes: { 'infergate.refusal.reason': 'requests', 'error.type': 'rate_limit_exceeded', 'http.response.status_code': 429 },
      value: 1,
    }),
  ]);
  const lookups = points(metrics, 'infergate.cache.lookups');
  expect(lookups.find((point) => point.attributes['infergate.cache.result'] === 'hit')?.value).toBe(1);
  // Every answer with the cache on says hit or miss: all but the hit (and the refusal, answered before the cache) missed.
  expect(lookups.find((point) => point.attributes['infergate.cache.result'] === 'miss')?.value).toBeGreaterThanOrEqual(4);

  // The overhead of each request that reached an upstream or the cache, in seconds, on the fine buckets.
  const overhead = points(metrics, 'infergate.overhead');
  expect(overhead.find((point) => matches(point, onGpt))?.value).toMatchObject({ count: 5 });
  expect(boundaries(metrics, 'infergate.overhead')?.slice(0, 3)).toEqual([0.00005, 0.0001, 0.00025]);
  expect(descriptor(metrics, 'infergate.overhead')).toMatchObject({ unit: 's' });

  // Each listed deployment the gateway used, as four series: 1 for the state it is in, 0 for the
  // others; the one the wildcard entry made is counted under _OTHER (clients choose those names).
  const states = points(metrics, 'infergate.deployment.state');
  expect(new Set(states.map((point) => point.attributes['infergate.deployment']))).toEqual(new Set(['first/gpt-4.1', '_OTHER']));
  for (const deployment of ['first/gpt-4.1', '_OTHER']) {
    const series = states.filter((point) => point.attributes['infergate.deployment'] === deployment);
    expect(series.map((point) => point.attributes['infergate.deployment.state']).sort()).toEqual(['degraded', 'half_open', 'healthy', 'open']);
    expect(series.map((point) => point.value).sort()).toEqual([0, 0, 0, 1]);
    expect(series[0]!.attributes['gen_ai.provider.name']).toBe('openai');
  }

  // $2 per million input and $8 per million output tokens, the cache hit for nothing; gpt-5 has the catalog's price.
  const dollars = points(metrics, 'infergate.cost');
  expect(dollars.map((point) => point.attributes)).toEqual([
    { ...onGpt, 'infergate.price_source': 'config' },
    { ...wild, 'infergate.price_source': 'genai-prices' },
  ]);
  expect(dollars[0]!.value).toBeCloseTo(((11 + 5 + 4 + 12) * 2 + (3 + 3 + 2 + 4) * 8) / 1e6, 12);
});

/** Exports until `names` are all there and `done` holds (events are recorded after the answers). */
async function collected(names: string[], done: (metrics: MetricData[]) => boolean): Promise<MetricData[]> {
  let metrics: MetricData[] = [];
  await expect
    .poll(async () => {
      exporter.reset();
      await reader.forceFlush();
      metrics = exporter.getMetrics().flatMap((resource) => resource.scopeMetrics.flatMap((scope) => scope.metrics));
      return names.every((name) => metrics.some((metric) => metric.descriptor.name === name)) && done(metrics);
    })
    .toBe(true);
  return metrics;
}

function points(metrics: MetricData[], name: string) {
  return metrics.find((metric) => metric.descriptor.name === name)?.dataPoints ?? [];
}

function descriptor(metrics: MetricData[], name: string) {
  return metrics.find((metric) => metric.descriptor.name === name)?.descriptor;
}

function boundaries(metrics: MetricData[], name: string): number[] | undefined {
  const metric = metrics.find((candidate) => candidate.descriptor.name === name);
  if (metric?.dataPointType !== DataPointType.HISTOGRAM) return undefined;
  return metric.dataPoints[0]?.value.buckets.boundaries;
}

function count(point: { value: unknown }): number {
  return (point.value as { count: number }).count;
}

function matches(point: { attributes: Record<string, unknown> }, attributes: Record<string, unknown>): boolean {
  return JSON.stringify(Object.entries(point.attributes).sort()) === JSON.stringify(Object.entries(attributes).sort());
}
