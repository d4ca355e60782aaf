import type { RequestLogRow } from '../../src/logs/request-log.js';
import type { ToolCallRow } from '../../src/logs/tool-call-log.js';

let counter = 0;

/** A row as `rowOf` makes them, with what the test sets; a fresh request id each time. */
export function logRow(overrides: Partial<RequestLogRow> = {}): RequestLogRow {
  counter++;
  return {
    requestId: `req_${String(counter).padStart(8, '0')}_${Math.random().toString(36).slice(2, 8)}`,
    startedAt: Date.now(),
    keyId: 'key-a',
    keyGroup: 'team',
    endpoint: '/v1/chat/completions',
    kind: 'text',
    stream: false,
    model: 'gpt-test',
    deployment: 'openai/gpt-test',
    provider: 'openai',
    upstreamModel: 'gpt-test-2026',
    routeReason: 'p2c',
    status: 'ok',
    httpStatus: 200,
    errorCode: null,
    errorMessage: null,
    cancelled: false,
    cached: false,
    finishReason: 'stop',
    responseId: 'chatcmpl-1',
    inputTokens: 10,
    outputTokens: 20,
    cachedInputTokens: 0,
    cacheWriteTokens: 0,
    reasoningTokens: 0,
    costUsd: 0.25,
    latencyMs: 100,
    ttftMs: 40,
    overheadMs: 1,
    attempts: 1,
    ...overrides,
  };
}

/** An error row. */
export function errorRow(overrides: Partial<RequestLogRow> = {}): RequestLogRow {
  return logRow({
    status: 'error',
    httpStatus: 502,
    errorCode: 'upstream_error',
    errorMessage: 'The upstream failed.',
    finishReason: null,
    responseId: null,
    outputTokens: 0,
    costUsd: 0,
    ttftMs: null,
    ...overrides,
  });
}

/** A tool call's row as `toolCallRowOf` makes them, with what the test sets; a fresh id each time. */
export function toolCallRow(overrides: Partial<ToolCallRow> = {}): ToolCallRow {
  counter++;
  return {
    id: `tcall_${String(counter).padStart(8, '0')}_${Math.random().toString(36).slice(2, 8)}`,
    startedAt: Date.now(),
    requestId: `req_${counter}`,
    keyId: 'key-a',
    keyGroup: 'team',
    sessionId: 'b3f1c2d4-0000-4000-8000-000000000001',
    protocolVersion: '2025-06-18',
    server: 'vault',
    tool: 'reveal',
    outcome: 'ok',
    durationMs: 12,
    requestBytes: 40,
    responseBytes: 80,
    error: null,
    ...overrides,
  };
}
