import { AsyncLocalStorage } from 'node:async_hooks';
import { readFileSync } from 'node:fs';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, context, propagation, trace, type Context, type ContextManager, type HrTime } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openTelemetryObserver } from '../../src/telemetry/otel-observer.js';
import { INFERGATE_VERSION } from '../../src/telemetry/version.js';
import { CLIENT_KEY, PROMPT, T0, UPSTREAM_KEY, attemptEvent, clientRequest, usageEvent } from './events.js';

/**
 * The OpenTelemetry observer with the real API and SDK: synthetic gateway events in, finished
 * spans out of an in-memory exporter.
 */
const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const tracer = provider.getTracer('test');

beforeAll(() => {
  // What a host's SDK set-up does (the Node SDK registers these by default).
  trace.setGlobalTracerProvider(provider);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  context.setGlobalContextManager(new AsyncContextManager());
});

afterEach(() => exporter.reset());

const spans = () => exporter.getFinishedSpans();
const byKind = (kind: SpanKind) => spans().filter((span) => span.kind === kind);
const millis = (time: HrTime) => time[0] * 1000 + time[1] / 1e6;

describe('openTelemetryObserver', () => {
  it('makes a SERVER span per request and a CLIENT child per attempt, timed by the events', async () => {
    const observer = openTelemetryObserver({ tracer });
    observer.onAttempt!(
      attemptEvent({ attempt: 1, status: 'error', error: { status: 429, code: 'rate_limit_exceeded', message: 'slow down' }, willRetry: true, delayMs: 250 }),
    );
    observer.onAttempt!(attemptEvent({ attempt: 2, deployment: 'openai/gpt-test-b', upstreamModel: 'gpt-test-b', startedAt: T0 + 600, latencyMs: 800 }));
    await observer.onUsage!(usageEvent(), clientRequest());

    expect(spans()).toHaveLength(3);
    const [request] = byKind(SpanKind.SERVER) as [ReadableSpan];
    const [first, second] = byKind(SpanKind.CLIENT) as [ReadableSpan, ReadableSpan];
    expect(request.name).toBe('chat fast');
    expect(first.name).toBe('chat gpt-test-2026');
    expect(second.name).toBe('chat gpt-test-b');

    for (const attempt of [first, second]) {
      expect(attempt.parentSpanContext?.spanId).toBe(request.spanContext().spanId);
      expect(attempt.spanContext().traceId).toBe(request.spanContext().traceId);
    }
    expect(request.parentSpanContext).toBeUndefined();

    expect(millis(request.startTime)).toBe(T0);
    expect(millis(request.endTime)).toBe(T0 + 1500);
    expect(millis(first.startTime)).toBe(T0 + 5);
    expect(millis(first.endTime)).toBe(T0 + 305);
    expect(millis(second.startTime)).toBe(T0 + 600);
    expect(millis(second.endTime)).toBe(T0 + 1400);

    expect(request.status.code).toBe(SpanStatusCode.UNSET);
    expect(request.attributes).toEqual({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai-main',
      'gen_ai.request.model': 'fast',
      'gen_ai.response.model': 'gpt-test-2026',
      'gen_ai.response.id': 'chatcmpl-xyz',
      'gen_ai.response.finish_reasons': ['stop'],
      'gen_ai.request.stream': true,
      'gen_ai.response.time_to_first_chunk': 0.4,
      'gen_ai.usage.input_tokens': 120,
      'gen_ai.usage.output_tokens': 30,
      'gen_ai.usage.cache_read.input_tokens': 100,
      'gen_ai.usage.cache_creation.input_tokens': 4,
      'gen_ai.usage.reasoning.output_tokens': 10,
      'http.request.method': 'POST',
      'http.route': '/v1/chat/completions',
      'http.response.status_code': 200,
      'infergate.request_id': 'req_1',
      'infergate.key_id': 'key_abc123',
      'infergate.endpoint': '/v1/chat/completions',
      'infergate.kind': 'text',
      'infergate.stream': true,
      'infergate.deployment': 'openai/gpt-test',
      'infergate.provider': 'openai-main',
      'infergate.attempts': 2,
      'infergate.ttft_ms': 400,
      'infergate.cost': 150,
      'infergate.cost_usd': 0.00042,
      'infergate.price_source': 'genai-prices',
    });

    expect(first.status).toEqual({ code: SpanStatusCode.ERROR, message: 'slow down' });
    expect(first.attributes).toEqual({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai-main',
      'gen_ai.request.model': 'gpt-test-2026',
      'infergate.request_id': 'req_1',
      'infergate.deployment': 'openai/gpt-test',
      'infergate.provider': 'openai-main',
      'infergate.attempt': 1,
      'infergate.attempt.outcome': 'error',
      'infergate.retry.will_retry': true,
      'infergate.retry.delay_ms': 250,
      'error.type': 'rate_limit_exceeded',
    });
    expect(second.status.code).toBe(SpanStatusCode.UNSET);
    expect(second.attributes).toMatchObject({
      'infergate.attempt': 2,
      'infergate.attempt.outcome': 'ok',
      'infergate.retry.will_retry': false,
      'gen_ai.request.model': 'gpt-test-b',
    });
    expect(second.attributes).not.toHaveProperty('error.type');
  });

  it("joins the caller's trace through its traceparent header", async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const callerSpanId = '00f067aa0ba902b7';
    const observer = openTelemetryObserver({ tracer });
    observer.onAttempt!(attemptEvent());
    await observer.onUsage!(usageEvent(), clientRequest({ traceparent: `00-${traceId}-${callerSpanId}-01` }));

    const [request] = byKind(SpanKind.SERVER) as [ReadableSpan];
    const [attempt] = byKind(SpanKind.CLIENT) as [ReadableSpan];
    expect(request.spanContext().traceId).toBe(traceId);
    expect(request.parentSpanContext).toMatchObject({ traceId, spanId: callerSpanId, isRemote: true });
    expect(attempt.spanContext().traceId).toBe(traceId);
    expect(attempt.parentSpanContext?.spanId).toBe(request.spanContext().spanId);
  });

  it("sits inside the host's own active span (INTERNAL) rather than beside it", async () => {
    const observer = openTelemetryObserver({ tracer });
    const hostSpan = tracer.startSpan('POST /v1/chat/completions', { kind: SpanKind.SERVER });
    await context.with(trace.setSpan(context.active(), hostSpan), () =>
      observer.onUsage!(usageEvent(), clientRequest({ traceparent: '00-11111111111111111111111111111111-2222222222222222-01' })),
    );
    hostSpan.end();

    const request = spans().find((span) => span.name === 'chat fast')!;
    expect(request.kind).toBe(SpanKind.INTERNAL);
    expect(request.spanContext().traceId).toBe(hostSpan.spanContext().traceId);
    expect(request.parentSpanContext?.spanId).toBe(hostSpan.spanContext().spanId);
  });

  it('marks a failed request ERROR with a low-cardinality error.type and a scrubbed message', async () => {
    const observer = openTelemetryObserver({ tracer });
    const error = { status: 401, code: 'invalid_api_key', message: `Incorrect API key provided: ${UPSTREAM_KEY}` };
    observer.onAttempt!(attemptEvent({ status: 'error', error }));
    await observer.onUsage!(
      usageEvent({ status: 'error', httpStatus: 502, error: { status: 502, code: null, message: error.message }, usage: {} }),
      clientRequest(),
    );

    const [request] = byKind(SpanKind.SERVER) as [ReadableSpan];
    const [attempt] = byKind(SpanKind.CLIENT) as [ReadableSpan];
    expect(request.status).toEqual({ code: SpanStatusCode.ERROR, message: 'Incorrect API key provided: sk-[redacted]' });
    expect(request.attributes['error.type']).toBe('502');
    expect(request.attributes['http.response.status_code']).toBe(502);
    expect(attempt.status.code).toBe(SpanStatusCode.ERROR);
    expect(attempt.attributes['error.type']).toBe('invalid_api_key');
    // Unknown usage is left unset, never reported as 0.
    expect(Object.keys(request.attributes).filter((name) => name.startsWith('gen_ai.usage.'))).toEqual([]);
  });

  it('reports a client that left as a cancelled error', async () => {
    const observer = openTelemetryObserver({ tracer });
    await observer.onUsage!(usageEvent({ status: 'error', cancelled: true }), clientRequest());
    const [request] = spans() as [ReadableSpan];
    expect(request.status).toEqual({ code: SpanStatusCode.ERROR, message: 'client disconnected' });
    expect(request.attributes).toMatchObject({ 'error.type': 'cancelled', 'infergate.cancelled': true });
  });

  it('puts each guardrail outcome on the request span: a summary attribute and an event with its facts', async () => {
    const observer = openTelemetryObserver({ tracer });
    await observer.onUsage!(
      usageEvent({
        status: 'error',
        httpStatus: 200,
        error: { status: 400, code: 'guardrail_blocked', message: "The answer was blocked by guardrail 'secrets' (api_key)." },
        guardrails: [
          { guardrail: 'pii', phase: 'input', action: 'mask', outcome: 'masked', categories: ['email'], findings: 2, durationMs: 0.25 },
          { guardrail: 'secrets', phase: 'output', action: 'block', outcome: 'blocked', categories: ['api_key'], findings: 1, durationMs: 1.5 },
        ],
      }),
      clientRequest(),
    );
    const [request] = spans() as [ReadableSpan];
    expect(request.attributes['infergate.guardrails']).toEqual(['pii:input:masked:email', 'secrets:output:blocked:api_key']);
    expect(request.attributes['error.type']).toBe('guardrail_blocked');
    expect(request.events.map((event) => ({ name: event.name, at: millis(event.time), attributes: event.attributes }))).toEqual([
      {
        name: 'infergate.guardrail',
        at: T0,
        attributes: {
          'infergate.guardrail.name': 'pii',
          'infergate.guardrail.phase': 'input',
          'infergate.guardrail.action': 'mask',
          'infergate.guardrail.outcome': 'masked',
          'infergate.guardrail.categories': ['email'],
          'infergate.guardrail.findings': 2,
          'infergate.guardrail.duration_ms': 0.25,
        },
      },
      {
        name: 'infergate.guardrail',
        at: T0 + 1500,
        attributes: {
          'infergate.guardrail.name': 'secrets',
          'infergate.guardrail.phase': 'output',
          'infergate.guardrail.action': 'block',
          'infergate.guardrail.outcome': 'blocked',
          'infergate.guardrail.categories': ['api_key'],
          'infergate.guardrail.findings': 1,
          'infergate.guardrail.duration_ms': 1.5,
        },
      },
    ]);
  });

  it('names media requests generate_content, with the output type where the conventions have one', async () => {
    const observer = openTelemetryObserver({ tracer });
    const media = { stream: false, ttftMs: undefined, finishReason: undefined, usage: {}, attempts: 1 };
    await observer.onUsage!(
      usageEvent({ ...media, requestId: 'img', kind: 'image', model: 'painter', endpoint: '/v1/images/generations', units: { images: 2 } }),
      clientRequest(),
    );
    await observer.onUsage!(
      usageEvent({ ...media, requestId: 'tts', kind: 'speech', model: 'voice', endpoint: '/v1/audio/speech', units: { characters: 42 } }),
      clientRequest(),
    );
    await observer.onUsage!(
      usageEvent({ ...media, requestId: 'vid', kind: 'video', model: 'director', endpoint: '/v1/video/generations', units: { videoSeconds: 5 } }),
      clientRequest(),
    );

    const [image, speech, video] = spans() as [ReadableSpan, ReadableSpan, ReadableSpan];
    expect(image.name).toBe('generate_content painter');
    expect(image.attributes).toMatchObject({ 'gen_ai.operation.name': 'generate_content', 'gen_ai.output.type': 'image', 'infergate.units.images': 2 });
    expect(speech.name).toBe('generate_content voice');
    expect(speech.attributes).toMatchObject({ 'gen_ai.output.type': 'speech', 'infergate.units.characters': 42 });
    expect(video.name).toBe('generate_content director');
    expect(video.attributes).toMatchObject({ 'infergate.kind': 'video', 'infergate.units.video_seconds': 5 });
    expect(video.attributes).not.toHaveProperty('gen_ai.output.type');
    for (const span of [image, speech, video]) {
      expect(span.attributes).not.toHaveProperty('gen_ai.request.stream');
      expect(span.attributes).not.toHaveProperty('gen_ai.response.time_to_first_chunk');
    }
  });

  it('never puts a key or a prompt on a span', async () => {
    const observer = openTelemetryObserver({ tracer });
    observer.onAttempt!(attemptEvent({ status: 'error', error: { status: 401, code: null, message: `bad key ${UPSTREAM_KEY}` }, willRetry: true }));
    observer.onAttempt!(attemptEvent({ attempt: 2 }));
    await observer.onUsage!(usageEvent(), clientRequest({ 'x-api-key': CLIENT_KEY, traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' }));

    expect(spans()).toHaveLength(3);
    const recorded = JSON.stringify(spans().map((span) => ({ name: span.name, attributes: span.attributes, status: span.status, events: span.events })));
    for (const secret of [CLIENT_KEY, UPSTREAM_KEY, PROMPT]) expect(recorded).not.toContain(secret);
  });

  it("attaches only the request's own attempts, and forgets them once emitted", async () => {
    const observer = openTelemetryObserver({ tracer });
    observer.onAttempt!(attemptEvent({ requestId: 'req_1' }));
    observer.onAttempt!(attemptEvent({ requestId: 'req_2' }));
    await observer.onUsage!(usageEvent({ requestId: 'req_1' }), clientRequest());
    await observer.onUsage!(usageEvent({ requestId: 'req_1' }), clientRequest());

    const attempts = byKind(SpanKind.CLIENT);
    expect(attempts).toHaveLength(1);
    expect(attempts[0]!.attributes['infergate.request_id']).toBe('req_1');
  });

  it("uses the provider's type for gen_ai.provider.name when told it", async () => {
    const observer = openTelemetryObserver({ tracer, providerType: (name) => (name === 'openai-main' ? 'openai' : undefined) });
    observer.onAttempt!(attemptEvent({ provider: 'claude', upstreamModel: 'claude-test' }));
    await observer.onUsage!(usageEvent(), clientRequest());
    expect(byKind(SpanKind.SERVER)[0]!.attributes).toMatchObject({ 'gen_ai.provider.name': 'openai', 'infergate.provider': 'openai-main' });
    expect(byKind(SpanKind.CLIENT)[0]!.attributes).toMatchObject({ 'gen_ai.provider.name': 'claude', 'infergate.provider': 'claude' });
  });

  it("defaults to the global tracer provider's `infergate` tracer", async () => {
    const observer = openTelemetryObserver();
    await observer.onUsage!(usageEvent(), clientRequest());
    const [request] = spans() as [ReadableSpan];
    expect(request.instrumentationScope).toMatchObject({ name: 'infergate', version: INFERGATE_VERSION });
  });

  it('names the tracer with the package version', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(INFERGATE_VERSION).toBe(pkg.version);
  });
});

/** What a Node host registers (`AsyncLocalStorageContextManager`), in a few lines. */
class AsyncContextManager implements ContextManager {
  private readonly storage = new AsyncLocalStorage<Context>();
  active(): Context {
    return this.storage.getStore() ?? ROOT_CONTEXT;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(ctx: Context, fn: F, thisArg?: ThisParameterType<F>, ...args: A): ReturnType<F> {
    return this.storage.run(ctx, () => fn.call(thisArg, ...args));
  }
  bind<T>(_context: Context, target: T): T {
    return target;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    this.storage.disable();
    return this;
  }
}
