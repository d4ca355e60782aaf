import type { AttemptEvent, UsageEvent } from '../../src/policy/events.js';

/** A client key and a prompt that must never show up in a span or a log line. */
export const CLIENT_KEY = 'client-key-do-not-leak-9f8e7d';
export const UPSTREAM_KEY = 'sk-upstreamsecret0123456789abcdef';
export const PROMPT = 'my secret prompt about the merger';

export const T0 = Date.parse('2026-11-22T10:00:00.000Z');

export function usageEvent(overrides: Partial<UsageEvent> = {}): UsageEvent {
  return {
    requestId: 'req_1',
    keyId: 'key_abc123',
    keyGroup: 'default',
    endpoint: '/v1/chat/completions',
    kind: 'text',
    stream: true,
    model: 'fast',
    deployment: 'openai/gpt-test',
    provider: 'openai-main',
    upstreamModel: 'gpt-test-2026',
    usage: { input: 120, output: 30, cachedRead: 100, cacheWrite: 4, reasoning: 10 },
    status: 'ok',
    httpStatus: 200,
    finishReason: 'stop',
    responseId: 'chatcmpl-xyz',
    attempts: 2,
    startedAt: T0,
    latencyMs: 1500,
    ttftMs: 400,
    cost: 150,
    costUsd: 0.00042,
    priceSource: 'genai-prices',
    ...overrides,
  };
}

export function attemptEvent(overrides: Partial<AttemptEvent> = {}): AttemptEvent {
  return {
    requestId: 'req_1',
    keyId: 'key_abc123',
    model: 'fast',
    deployment: 'openai/gpt-test',
    provider: 'openai-main',
    upstreamModel: 'gpt-test-2026',
    attempt: 1,
    status: 'ok',
    willRetry: false,
    startedAt: T0 + 5,
    latencyMs: 300,
    ...overrides,
  };
}

/** The request a client sent: its key and prompt are there for the observer to (not) pick up. */
export function clientRequest(headers: Record<string, string> = {}): Request {
  return new Request('http://127.0.0.1/v1/chat/completions', {
    method: 'POST',
    headers: { authorization: `Bearer ${CLIENT_KEY}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model: 'fast', messages: [{ role: 'user', content: PROMPT }] }),
  });
}
