import type { GuardrailOutcome } from '../guardrails/checker.js';
import type { CapturedContent } from '../logs/content-capture.js';
import type { McpToolCallEvent } from '../mcp/tool-call-event.js';
import type { IRUsage } from '../protocols/ir.js';
import type { RouteReason } from '../routing/deployments.js';
import type { ModelKind } from '../routing/model.js';

/** The error a request or attempt ended with, as the client (or the retry loop) saw it. */
export interface EventError {
  status: number;
  code: string | null;
  message: string;
}

/**
 * One per request that passed authentication, model resolution and the limits: the billing
 * and observability record. Fired once the answer is complete (a stream: when it ends, fails or
 * the client leaves; a cut stream is charged for what was produced).
 */
export interface UsageEvent {
  requestId: string;
  keyId: string;
  /** The key's group (`KeyRecord.group`, `default` when unset): rollups and reports add up by it. */
  keyGroup: string;
  /** Route path, e.g. `/v1/chat/completions`. */
  endpoint: string;
  kind: ModelKind;
  stream: boolean;
  /** Public model id. */
  model: string;
  /** The deployment that answered (or was tried last): its id, provider name and upstream model. */
  deployment: string;
  provider: string;
  upstreamModel: string;
  /** Normalized usage (OpenAI semantics: `input` includes cached reads and cache writes). */
  usage: IRUsage;
  /** The upstream's own usage object, as it sent it (merged across stream events). */
  rawUsage?: Record<string, unknown> | undefined;
  /** Media units: images made, seconds of video asked for, characters spoken, seconds of audio transcribed (when known). */
  units?: { images?: number | undefined; videoSeconds?: number | undefined; characters?: number | undefined; audioSeconds?: number | undefined } | undefined;
  /** `ok`, or `error` when the request failed or its stream did not complete. */
  status: 'ok' | 'error';
  /** HTTP status the client got (a stream that failed after it started still got 200). */
  httpStatus: number;
  error?: EventError | undefined;
  /** Set when the client disconnected before the answer was complete. */
  cancelled?: boolean | undefined;
  finishReason?: string | undefined;
  /** Id of the answer the client saw (`chatcmpl-…`, `resp_…`, `msg_…`, a video task id). */
  responseId?: string | undefined;
  /** Upstream attempts made (1 without retries). */
  attempts: number;
  /**
   * Why the deployment that answered was picked, as `x-infergate-route`'s `reason` says (`p2c`,
   * `sticky`, `price`, `configured`, `probe`, `last_resort`, `only`, or `fallback` when an earlier
   * one failed); unset when no upstream was tried (a cache hit, a refusal before routing).
   */
  routeReason?: RouteReason | 'fallback' | undefined;
  /** Each guardrail's result on this request (docs/policies.md, "Guardrails"); unset when none ran. */
  guardrails?: readonly GuardrailOutcome[] | undefined;
  /** ms since epoch when the request reached the pipeline. */
  startedAt: number;
  latencyMs: number;
  /** ms from start to the first byte of a streamed answer. */
  ttftMs?: number | undefined;
  /**
   * The gateway's own time, in ms (with `metrics` on): from the request reaching the gateway until
   * its answer was ready (a whole answer built, or a stream's headers), less the time waiting on
   * upstream calls and retry back-off. docs/metrics.md, "Overhead", says exactly what counts.
   */
  overheadMs?: number | undefined;
  /**
   * Answered from the response cache: `usage` is the original call's, no upstream was called
   * (`attempts` 0), `costUsd` is 0 and the default `policies.cost` is 0.
   */
  cached?: boolean | undefined;
  /** Spend charged, in `options.policies.cost` units. */
  cost: number;
  /** Dollars this request cost, from `priceSource` (0 when `unpriced`). */
  costUsd: number;
  /** Where the price came from: `config` (the model's `price`), the catalog's name (`genai-prices`), or `unpriced`. */
  priceSource: string;
  /**
   * The request's and answer's texts, scrubbed and capped: only with `captureContent` on, and
   * only on text requests (Responses, Chat Completions, Messages, Gemini).
   */
  content?: CapturedContent | undefined;
}

/** One per upstream attempt, successful or not, so retries and fallbacks are visible. */
export interface AttemptEvent {
  requestId: string;
  keyId: string;
  model: string;
  deployment: string;
  provider: string;
  upstreamModel: string;
  /** 1-based. */
  attempt: number;
  status: 'ok' | 'error';
  error?: EventError | undefined;
  /** Whether the gateway tries again after this failure, and after how long. */
  willRetry: boolean;
  delayMs?: number | undefined;
  startedAt: number;
  latencyMs: number;
}

/** Why admission refused a request: the limit, quota, balance or budget that said no. */
export type RefusalReason = 'requests' | 'tokens' | 'concurrency' | 'quota' | 'balance' | 'budget' | 'unpriced';

/**
 * One per request the key's limits, quota, balance or dollar budget refused (a 429, or the 403
 * of an unpriced model under a budget): such a request has no usage event, as nothing was used.
 */
export interface RefusalEvent {
  requestId: string;
  keyId: string;
  reason: RefusalReason;
  /** The status and error code the client got (`rate_limit_exceeded`, `insufficient_quota`, `model_unpriced`). */
  status: number;
  code: string | null;
}

/**
 * What the gateway tells about each request: the user's hooks and the built-in telemetry are
 * both observers. A throwing observer is logged, never surfaced to the client.
 */
export interface RequestObserver {
  onAttempt?(event: AttemptEvent): void | Promise<void>;
  onUsage?(event: UsageEvent, request: Request): void | Promise<void>;
  /** A request refused at admission (see `RefusalEvent`). */
  onRefused?(event: RefusalEvent): void | Promise<void>;
  /** Each `tools/call` through `/mcp`, once it ended (see `McpToolCallEvent`). */
  onToolCall?(event: McpToolCallEvent, request: Request): void | Promise<void>;
}
