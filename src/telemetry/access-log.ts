import type { Logger } from '../logger.js';
import type { McpToolCallEvent } from '../mcp/tool-call-event.js';
import type { AttemptEvent, UsageEvent } from '../policy/events.js';
import type { GatewayPlugin } from '../plugins/plugin.js';
import { guardrailSummaries } from './guardrail-summary.js';

/**
 * One structured line per request when it ends, one per MCP tool call, and one warning per failed
 * upstream attempt that the gateway retries. Built from the events alone, which carry ids, never a
 * key, a prompt, a tool's arguments or an upstream URL. Built in: `accessLog: true` adds it.
 */
export function accessLogObserver(logger: Logger): GatewayPlugin {
  return {
    onAttempt(event) {
      if (event.status === 'error' && event.willRetry) logger.warn('upstream attempt failed, retrying', attemptFields(event));
    },
    onUsage(event) {
      logger.info('request', requestFields(event));
    },
    onToolCall(event) {
      logger.info('tool call', toolCallFields(event));
    },
  };
}

/** Never `arguments`, even when `mcp.captureArguments` put them on the event: a log line is not the place. */
function toolCallFields(event: McpToolCallEvent): Record<string, unknown> {
  return {
    requestId: event.requestId,
    keyId: event.keyId,
    endpoint: '/mcp',
    sessionId: event.sessionId,
    server: event.server,
    tool: event.tool,
    outcome: event.outcome,
    durationMs: event.durationMs,
    requestBytes: event.requestBytes,
    responseBytes: event.responseBytes,
    ...(event.error !== undefined ? { error: event.error } : {}),
  };
}

function requestFields(event: UsageEvent): Record<string, unknown> {
  const guardrails = guardrailSummaries(event.guardrails);
  return {
    requestId: event.requestId,
    keyId: event.keyId,
    endpoint: event.endpoint,
    model: event.model,
    deployment: event.deployment,
    stream: event.stream,
    status: event.status,
    httpStatus: event.httpStatus,
    latencyMs: event.latencyMs,
    ...(event.ttftMs !== undefined ? { ttftMs: event.ttftMs } : {}),
    attempts: event.attempts,
    usage: event.usage,
    ...(event.units ? { units: event.units } : {}),
    cost: event.cost,
    costUsd: event.costUsd,
    priceSource: event.priceSource,
    ...(event.finishReason ? { finishReason: event.finishReason } : {}),
    ...(event.cancelled ? { cancelled: true } : {}),
    ...(event.cached ? { cached: true } : {}),
    ...(event.error ? { error: event.error } : {}),
    ...(guardrails ? { guardrails } : {}),
  };
}

function attemptFields(event: AttemptEvent): Record<string, unknown> {
  return {
    requestId: event.requestId,
    keyId: event.keyId,
    model: event.model,
    deployment: event.deployment,
    attempt: event.attempt,
    latencyMs: event.latencyMs,
    ...(event.delayMs !== undefined ? { retryInMs: event.delayMs } : {}),
    ...(event.error ? { error: event.error } : {}),
  };
}
