import type { UsageEvent } from '../policy/events.js';
import type { ModelKind } from '../routing/model.js';
import { guardrailSummaries } from '../telemetry/guardrail-summary.js';
import type { ToolCallPage, ToolCallQuery, ToolCallRow } from './tool-call-log.js';

/**
 * The durable request log (docs/admin.md, "Request log"): one row per request that reached an
 * upstream or the cache (every usage event), written off the request's path by a sink, and read
 * back by `/admin/logs`, the dashboard's charts and, from the daily rollups, `GET /v1/usage`.
 * `MemoryRequestLog` keeps a bounded ring in this process (the default); `PostgresRequestLog`
 * (`infergate/postgres`) keeps every row, partitioned by day, with rollups per day, key and model.
 */

/** One request. Narrow on purpose: ids, numbers and short strings, no per-row metadata blob. */
export interface RequestLogRow {
  /** The gateway's request id (`req_…`): the idempotency key, a row is written once. */
  requestId: string;
  /** ms since epoch when the request reached the pipeline. */
  startedAt: number;
  keyId: string;
  keyGroup: string;
  /** Route path (`/v1/chat/completions`). */
  endpoint: string;
  kind: ModelKind;
  stream: boolean;
  model: string;
  deployment: string;
  provider: string;
  upstreamModel: string;
  /** Why the deployment was picked (`p2c`, `sticky`, `fallback`, …); null when no upstream was tried. */
  routeReason: string | null;
  status: 'ok' | 'error';
  httpStatus: number;
  /** The error's code (`rate_limit_exceeded`, `upstream_error`…) or null. */
  errorCode: string | null;
  /** The error message the client saw, cut to 500 characters, or null. */
  errorMessage: string | null;
  cancelled: boolean;
  cached: boolean;
  finishReason: string | null;
  responseId: string | null;
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
  cacheWriteTokens: number;
  reasoningTokens: number;
  costUsd: number;
  latencyMs: number;
  ttftMs: number | null;
  overheadMs: number | null;
  attempts: number;
  /** Each guardrail's outcome as `name:phase:outcome[:categories]` (docs/policies.md, "Guardrails"); unset when none ran. */
  guardrails?: string[] | undefined;
  /** The request and answer texts, only when the operator opts in (`content: true`), after redaction. */
  content?: { request?: string | undefined; response?: string | undefined } | undefined;
}

/** Where the usage events go: must never wait on storage on the request's path. */
export interface RequestLogSink {
  /** Queues one row; never throws. A full queue applies the sink's overflow policy. */
  write(row: RequestLogRow): void | Promise<void>;
  /** Queues one MCP tool call's row, as `write` (a sink without it does not keep tool calls). */
  writeToolCall?(row: ToolCallRow): void | Promise<void>;
  /** Writes everything queued so far (tests, shutdown). */
  flush(): Promise<void>;
  /** Flushes, then releases connections. */
  close(): Promise<void>;
  /** Rows written, waiting, and dropped by the overflow policy since start. */
  sinkStats(): SinkStats;
}

export interface SinkStats {
  written: number;
  queued: number;
  dropped: number;
  /** Batches that failed and were retried or given up (`failedRows`). */
  failedBatches: number;
  failedRows: number;
}

/** Filters of `/admin/logs`: every one optional, all of them applied together. */
export interface LogQuery {
  keyId?: string | undefined;
  model?: string | undefined;
  /** `ok`, `error`, or one HTTP status. */
  status?: 'ok' | 'error' | number | undefined;
  /** ms since epoch, `from` included, `to` excluded. */
  from?: number | undefined;
  to?: number | undefined;
  /** Newest first. A cursor comes from the previous page's `next`. */
  cursor?: string | undefined;
  /** 1–500. */
  limit: number;
}

export interface LogPage {
  data: RequestLogRow[];
  next?: string | undefined;
}

/** What the dashboard's charts ask: totals over time, split by model or by key. */
export interface StatsQuery {
  from: number;
  to: number;
  /** Width of a point on the charts. */
  bucket: 'hour' | 'day';
  /** The series' dimension. */
  by: 'model' | 'key';
  keyId?: string | undefined;
  model?: string | undefined;
}

export interface StatsPoint {
  /** Start of the bucket, ms since epoch (UTC hours and days). */
  at: number;
  requests: number;
  errors: number;
  costUsd: number;
  inputTokens: number;
  outputTokens: number;
}

export interface Stats {
  /** One series per model (or key), at most 10: the largest by cost, the rest summed under `(other)`. */
  series: { name: string; points: StatsPoint[] }[];
  totals: { requests: number; errors: number; costUsd: number; inputTokens: number; outputTokens: number };
  /** Percentiles over the range's requests, in ms (null without requests). */
  latency: { p50: number | null; p90: number | null; p99: number | null };
  ttft: { p50: number | null; p90: number | null; p99: number | null };
}

/** Reading the log back: `/admin/logs`, one request's detail and the charts. */
export interface RequestLogReader {
  query(query: LogQuery): Promise<LogPage>;
  get(requestId: string): Promise<RequestLogRow | undefined>;
  stats(query: StatsQuery): Promise<Stats>;
  /** The MCP tool calls, as `query` (a log without it keeps none: `/admin/tool-calls` answers 404). */
  queryToolCalls?(query: ToolCallQuery): Promise<ToolCallPage>;
  /** `memory` or `postgres`: the dashboard says which. */
  readonly kind: string;
}

/** A log that is both (the built-in ones are). */
export interface RequestLog extends RequestLogSink, RequestLogReader {}

const MAX_ERROR_MESSAGE = 500;

/** The row of a usage event. */
export function rowOf(event: UsageEvent): RequestLogRow {
  const message = event.error?.message;
  const guardrails = guardrailSummaries(event.guardrails);
  return {
    requestId: event.requestId,
    startedAt: event.startedAt,
    keyId: event.keyId,
    keyGroup: event.keyGroup,
    endpoint: event.endpoint,
    kind: event.kind,
    stream: event.stream,
    model: event.model,
    deployment: event.deployment,
    provider: event.provider,
    upstreamModel: event.upstreamModel,
    routeReason: event.routeReason ?? null,
    status: event.status,
    httpStatus: event.httpStatus,
    errorCode: event.error?.code ?? null,
    errorMessage: message === undefined ? null : message.length > MAX_ERROR_MESSAGE ? message.slice(0, MAX_ERROR_MESSAGE) : message,
    cancelled: event.cancelled === true,
    cached: event.cached === true,
    finishReason: event.finishReason ?? null,
    responseId: event.responseId ?? null,
    inputTokens: event.usage.input ?? 0,
    outputTokens: event.usage.output ?? 0,
    cachedInputTokens: event.usage.cachedRead ?? 0,
    cacheWriteTokens: event.usage.cacheWrite ?? 0,
    reasoningTokens: event.usage.reasoning ?? 0,
    costUsd: event.costUsd,
    latencyMs: event.latencyMs,
    ttftMs: event.ttftMs ?? null,
    overheadMs: event.overheadMs ?? null,
    attempts: event.attempts,
    ...(guardrails ? { guardrails } : {}),
    ...(event.content ? { content: event.content } : {}),
  };
}
