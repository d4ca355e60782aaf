import type { Context, Span, TextMapGetter, Tracer } from '@opentelemetry/api';
import type { Logger } from '../logger.js';
import type { McpToolCallEvent } from '../mcp/tool-call-event.js';
import type { AttemptEvent, UsageEvent } from '../policy/events.js';
import type { GatewayPlugin } from '../plugins/plugin.js';
import { AttemptBuffer } from './attempt-buffer.js';
import {
  GUARDRAIL_EVENT,
  attemptAttributes,
  guardrailEventAttributes,
  operationName,
  requestAttributes,
  shortStatus,
  statusMessage,
} from './genai-attributes.js';
import { toolCallAttributes, toolCallErrorType, toolCallSpanName } from './mcp-attributes.js';
import { INFERGATE_VERSION } from './version.js';

type OpenTelemetryApi = typeof import('@opentelemetry/api');

export interface OpenTelemetryObserverOptions {
  /** Where spans go. Default: `trace.getTracer('infergate', version)` from the global tracer provider. */
  tracer?: Tracer;
  /**
   * Prompts and outputs are never put on spans (the GenAI conventions make them opt-in); the
   * option exists so that turning it on some day is an explicit change, not a default.
   */
  captureContent?: false;
  /**
   * The provider type behind a configured provider name (`providers[name].type`), used for
   * `gen_ai.provider.name`. Default: the configured name itself.
   */
  providerType?: (providerName: string) => string | undefined;
  /** Told once if `@opentelemetry/api` cannot be loaded. Default: `console.warn`. */
  logger?: Logger;
}

/**
 * Spans from the gateway's events, made after the fact: a span per request (SERVER, or
 * INTERNAL under a host's own HTTP span), named `{gen_ai.operation.name} {model}`, with a
 * CLIENT child per upstream attempt; a span per MCP tool call (`mcp-attributes.ts`). The request path pays for nothing but the events; the
 * spans carry the events' own start and end times.
 *
 * `@opentelemetry/api` is an optional peer dependency, loaded on first use; without it the
 * observer warns once and does nothing. Built in as a plugin: `telemetry: true` adds it.
 */
export function openTelemetryObserver(options: OpenTelemetryObserverOptions = {}): GatewayPlugin {
  const attempts = new AttemptBuffer();
  const providerName = (name: string) => options.providerType?.(name) ?? name;
  let api: Promise<OpenTelemetryApi | undefined> | undefined;

  const loadApi = () =>
    (api ??= import('@opentelemetry/api').then(
      (module) => module,
      (error: unknown) => {
        const warn = options.logger ? options.logger.warn.bind(options.logger) : console.warn;
        warn('telemetry is off: @opentelemetry/api could not be loaded (install it to get spans)', {
          message: error instanceof Error ? error.message : String(error),
        });
        return undefined;
      },
    ));

  return {
    onAttempt(event) {
      attempts.add(event);
    },
    async onUsage(event, request) {
      const requestAttempts = attempts.take(event.requestId);
      const otel = await loadApi();
      if (!otel) return;
      const tracer = options.tracer ?? otel.trace.getTracer('infergate', INFERGATE_VERSION);
      emitSpans(otel, tracer, event, requestAttempts, request, providerName);
    },
    async onToolCall(event, request) {
      const otel = await loadApi();
      if (!otel) return;
      emitToolCallSpan(otel, options.tracer ?? otel.trace.getTracer('infergate', INFERGATE_VERSION), event, request);
    },
  };
}

/** The gateway's MCP server span for one tool call, in the caller's trace as a request span is. */
function emitToolCallSpan(otel: OpenTelemetryApi, tracer: Tracer, event: McpToolCallEvent, request: Request): void {
  const { parent, local } = parentContext(otel, request);
  const span = tracer.startSpan(
    toolCallSpanName(event),
    { kind: local ? otel.SpanKind.INTERNAL : otel.SpanKind.SERVER, startTime: event.startedAt, attributes: toolCallAttributes(event) },
    parent,
  );
  const error = toolCallErrorType(event.outcome);
  if (error) setError(otel, span, shortStatus(event.error ?? error));
  span.end(event.startedAt + event.durationMs);
}

function emitSpans(
  otel: OpenTelemetryApi,
  tracer: Tracer,
  event: UsageEvent,
  requestAttempts: readonly AttemptEvent[],
  request: Request | undefined,
  providerName: (name: string) => string,
): void {
  const { parent, local } = parentContext(otel, request);
  const requestSpan = tracer.startSpan(
    `${operationName(event.kind)} ${event.model}`,
    {
      // A host's HTTP instrumentation already made the SERVER span; ours then sits inside it.
      kind: local ? otel.SpanKind.INTERNAL : otel.SpanKind.SERVER,
      startTime: event.startedAt,
      attributes: requestAttributes(event, providerName(event.provider), request?.method),
    },
    parent,
  );
  if (event.status === 'error') setError(otel, requestSpan, statusMessage(event.error, event.cancelled));
  // Input checks run before any upstream call, output checks through the answer: stamped at the start and the end.
  const end = event.startedAt + event.latencyMs;
  for (const outcome of event.guardrails ?? []) {
    requestSpan.addEvent(GUARDRAIL_EVENT, guardrailEventAttributes(outcome), outcome.phase === 'input' ? event.startedAt : end);
  }

  const requestContext = otel.trace.setSpan(parent, requestSpan);
  for (const attempt of requestAttempts) {
    const attemptSpan = tracer.startSpan(
      `${operationName(event.kind)} ${attempt.upstreamModel}`,
      { kind: otel.SpanKind.CLIENT, startTime: attempt.startedAt, attributes: attemptAttributes(attempt, event.kind, providerName(attempt.provider)) },
      requestContext,
    );
    if (attempt.status === 'error') setError(otel, attemptSpan, statusMessage(attempt.error));
    attemptSpan.end(attempt.startedAt + attempt.latencyMs);
  }
  requestSpan.end(end);
}

/**
 * The span the request belongs to: the active one when the host traces its own HTTP handling
 * (it already joined the caller's trace), else the caller's `traceparent`, through whatever
 * propagator the host registered (W3C Trace Context with the Node SDK).
 */
function parentContext(otel: OpenTelemetryApi, request: Request | undefined): { parent: Context; local: boolean } {
  const active = otel.context.active();
  const activeSpan = otel.trace.getSpan(active)?.spanContext();
  if (activeSpan && otel.trace.isSpanContextValid(activeSpan)) return { parent: active, local: activeSpan.isRemote !== true };
  if (!request) return { parent: active, local: false };
  return { parent: otel.propagation.extract(active, request.headers, headersGetter), local: false };
}

const headersGetter: TextMapGetter<Headers> = {
  keys: (headers) => [...headers.keys()],
  get: (headers, key) => headers.get(key) ?? undefined,
};

function setError(otel: OpenTelemetryApi, span: Span, message: string): void {
  span.setStatus({ code: otel.SpanStatusCode.ERROR, message });
}
