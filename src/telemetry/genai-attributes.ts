import type { Attributes } from '@opentelemetry/api';
import type { GuardrailOutcome } from '../guardrails/checker.js';
import type { AttemptEvent, EventError, UsageEvent } from '../policy/events.js';
import type { ModelKind } from '../routing/model.js';
import { guardrailSummaries } from './guardrail-summary.js';
import { scrubSecrets } from './redact.js';

/*
 * Span attributes from the gateway's events, after the OpenTelemetry GenAI semantic conventions
 * (development status; semantic-conventions v1.41 and the open-telemetry/semantic-conventions-genai
 * registry that succeeds it): `gen_ai.provider.name` (not the older `gen_ai.system`),
 * `gen_ai.usage.cache_read.input_tokens`, `gen_ai.request.stream`,
 * `gen_ai.response.time_to_first_chunk`. Gateway facts with no convention are `infergate.*`.
 * Never content: no prompt, output, key or upstream URL is in the events to begin with.
 */

/**
 * `chat` for the text endpoints (Responses, Chat Completions and Messages are all chat-style),
 * `embeddings` for embeddings (a convention value);
 * the conventions have no image, speech or video operation, so those use the closest,
 * `generate_content` ("multimodal content generation"), with `gen_ai.output.type` saying which.
 */
export function operationName(kind: ModelKind): string {
  if (kind === 'embedding') return 'embeddings';
  return kind === 'text' ? 'chat' : 'generate_content';
}

/** Well-known `gen_ai.output.type` values; video has none, `infergate.kind` says it. */
function outputType(kind: ModelKind): string | undefined {
  if (kind === 'image') return 'image';
  if (kind === 'speech') return 'speech';
  return undefined;
}

/** The request span: the gateway's answer to one client request, with its usage. */
export function requestAttributes(event: UsageEvent, providerName: string, method: string | undefined): Attributes {
  const attributes: Attributes = {
    'gen_ai.operation.name': operationName(event.kind),
    'gen_ai.provider.name': providerName,
    'gen_ai.request.model': event.model,
    // The deployment's upstream model: what actually answered, as far as the gateway knows.
    'gen_ai.response.model': event.upstreamModel,
    'http.route': event.endpoint,
    'http.response.status_code': event.httpStatus,
    'infergate.request_id': event.requestId,
    'infergate.key_id': event.keyId,
    'infergate.endpoint': event.endpoint,
    'infergate.kind': event.kind,
    'infergate.stream': event.stream,
    'infergate.deployment': event.deployment,
    'infergate.provider': event.provider,
    'infergate.attempts': event.attempts,
    'infergate.cost': event.cost,
    'infergate.cost_usd': event.costUsd,
    'infergate.price_source': event.priceSource,
  };
  if (method) attributes['http.request.method'] = method;
  const output = outputType(event.kind);
  if (output) attributes['gen_ai.output.type'] = output;
  // The conventions: set only for a streaming request; unset means not streaming.
  if (event.stream) attributes['gen_ai.request.stream'] = true;
  // A response-cache hit: no upstream was called.
  if (event.cached) attributes['infergate.cached'] = true;
  if (event.responseId) attributes['gen_ai.response.id'] = event.responseId;
  if (event.finishReason) attributes['gen_ai.response.finish_reasons'] = [event.finishReason];
  if (event.ttftMs !== undefined) {
    attributes['gen_ai.response.time_to_first_chunk'] = event.ttftMs / 1000;
    attributes['infergate.ttft_ms'] = event.ttftMs;
  }
  // Unknown counts stay unset, never a made-up 0. `input` already includes cache reads and writes, as the conventions want.
  const { usage } = event;
  setCount(attributes, 'gen_ai.usage.input_tokens', usage.input);
  setCount(attributes, 'gen_ai.usage.output_tokens', usage.output);
  setCount(attributes, 'gen_ai.usage.cache_read.input_tokens', usage.cachedRead);
  setCount(attributes, 'gen_ai.usage.cache_creation.input_tokens', usage.cacheWrite);
  setCount(attributes, 'gen_ai.usage.reasoning.output_tokens', usage.reasoning);
  setCount(attributes, 'infergate.units.images', event.units?.images);
  setCount(attributes, 'infergate.units.video_seconds', event.units?.videoSeconds);
  setCount(attributes, 'infergate.units.characters', event.units?.characters);
  setCount(attributes, 'infergate.units.audio_seconds', event.units?.audioSeconds);
  if (event.cancelled) attributes['infergate.cancelled'] = true;
  if (event.status === 'error') attributes['error.type'] = errorType(event.error, event.cancelled);
  // One string per guardrail, so a trace search can find the requests a guardrail masked or blocked.
  const guardrails = guardrailSummaries(event.guardrails);
  if (guardrails) attributes['infergate.guardrails'] = guardrails;
  return attributes;
}

/** The name of the request span's event for one guardrail outcome. */
export const GUARDRAIL_EVENT = 'infergate.guardrail';

/**
 * One guardrail outcome as a span event's attributes. The GenAI conventions have no guardrail
 * signal yet (proposals are open), so these are `infergate.guardrail.*`. Categories, counts and
 * time only: never the text found.
 */
export function guardrailEventAttributes(outcome: GuardrailOutcome): Attributes {
  return {
    'infergate.guardrail.name': outcome.guardrail,
    'infergate.guardrail.phase': outcome.phase,
    'infergate.guardrail.action': outcome.action,
    'infergate.guardrail.outcome': outcome.outcome,
    'infergate.guardrail.categories': [...outcome.categories],
    'infergate.guardrail.findings': outcome.findings,
    'infergate.guardrail.duration_ms': outcome.durationMs,
  };
}

/** An attempt span: one upstream call, as the gateway (the GenAI client here) made it. */
export function attemptAttributes(attempt: AttemptEvent, kind: ModelKind, providerName: string): Attributes {
  const attributes: Attributes = {
    'gen_ai.operation.name': operationName(kind),
    'gen_ai.provider.name': providerName,
    'gen_ai.request.model': attempt.upstreamModel,
    'infergate.request_id': attempt.requestId,
    'infergate.deployment': attempt.deployment,
    'infergate.provider': attempt.provider,
    'infergate.attempt': attempt.attempt,
    'infergate.attempt.outcome': attempt.status,
    'infergate.retry.will_retry': attempt.willRetry,
  };
  if (attempt.delayMs !== undefined) attributes['infergate.retry.delay_ms'] = attempt.delayMs;
  if (attempt.status === 'error') attributes['error.type'] = errorType(attempt.error);
  return attributes;
}

/** Low-cardinality, as `error.type` asks: the error code, else the HTTP status; `_OTHER` is the conventions' fallback. */
export function errorType(error: EventError | undefined, cancelled?: boolean): string {
  if (error?.code) return error.code;
  if (error) return String(error.status);
  return cancelled ? 'cancelled' : '_OTHER';
}

/** The span status description: the message the client saw, scrubbed and kept short. */
export function statusMessage(error: EventError | undefined, cancelled?: boolean): string {
  if (!error) return cancelled ? 'client disconnected' : 'failed';
  return shortStatus(error.message);
}

/** A span status description from a message: scrubbed and kept short. */
export function shortStatus(text: string): string {
  const message = scrubSecrets(text);
  return message.length > 256 ? message.slice(0, 255) + '…' : message;
}

function setCount(attributes: Attributes, name: string, value: number | undefined): void {
  if (value !== undefined && Number.isFinite(value)) attributes[name] = value;
}
