import { describe, expect, it } from 'vitest';
import { accessLogObserver } from '../../src/telemetry/access-log.js';
import { redactingLogger } from '../../src/telemetry/redacting-logger.js';
import { recordingLogger as recording } from '../helpers/recording-logger.js';
import { CLIENT_KEY, PROMPT, UPSTREAM_KEY, attemptEvent, clientRequest, usageEvent } from './events.js';

describe('accessLogObserver', () => {
  it('writes one info line per request with ids, outcome, timing and usage', async () => {
    const { logger, lines } = recording();
    const observer = accessLogObserver(logger);
    await observer.onUsage!(usageEvent(), clientRequest());
    expect(lines).toEqual([
      {
        level: 'info',
        message: 'request',
        fields: {
          requestId: 'req_1',
          keyId: 'key_abc123',
          endpoint: '/v1/chat/completions',
          model: 'fast',
          deployment: 'openai/gpt-test',
          stream: true,
          status: 'ok',
          httpStatus: 200,
          latencyMs: 1500,
          ttftMs: 400,
          attempts: 2,
          usage: { input: 120, output: 30, cachedRead: 100, cacheWrite: 4, reasoning: 10 },
          cost: 150,
          costUsd: 0.00042,
          priceSource: 'genai-prices',
          finishReason: 'stop',
        },
      },
    ]);
  });

  it('includes the error of a failed request', async () => {
    const { logger, lines } = recording();
    await accessLogObserver(logger).onUsage!(
      usageEvent({ status: 'error', httpStatus: 502, error: { status: 502, code: 'upstream_error', message: 'bad gateway' } }),
      clientRequest(),
    );
    expect(lines[0]!.fields).toMatchObject({ status: 'error', httpStatus: 502, error: { status: 502, code: 'upstream_error', message: 'bad gateway' } });
  });

  it("lists each guardrail's outcome as name:phase:outcome[:categories], and nothing when none ran", async () => {
    const { logger, lines } = recording();
    const observer = accessLogObserver(logger);
    await observer.onUsage!(
      usageEvent({
        guardrails: [
          { guardrail: 'pii', phase: 'input', action: 'mask', outcome: 'masked', categories: ['email', 'phone'], findings: 3, durationMs: 0.2 },
          { guardrail: 'moderation', phase: 'output', action: 'block', outcome: 'passed', categories: [], findings: 0, durationMs: 85 },
        ],
      }),
      clientRequest(),
    );
    await observer.onUsage!(usageEvent({ guardrails: [] }), clientRequest());
    expect(lines[0]!.fields).toMatchObject({ guardrails: ['pii:input:masked:email,phone', 'moderation:output:passed'] });
    expect(lines[1]!.fields).not.toHaveProperty('guardrails');
  });

  it('warns once per failed attempt that will be retried, and only then', async () => {
    const { logger, lines } = recording();
    const observer = accessLogObserver(logger);
    const error = { status: 429, code: 'rate_limit_exceeded', message: 'slow down' };
    await observer.onAttempt!(attemptEvent({ attempt: 1, status: 'error', error, willRetry: true, delayMs: 250 }));
    await observer.onAttempt!(attemptEvent({ attempt: 2, status: 'error', error, willRetry: false }));
    await observer.onAttempt!(attemptEvent({ attempt: 3 }));
    expect(lines).toEqual([
      {
        level: 'warn',
        message: 'upstream attempt failed, retrying',
        fields: { requestId: 'req_1', keyId: 'key_abc123', model: 'fast', deployment: 'openai/gpt-test', attempt: 1, latencyMs: 300, retryInMs: 250, error },
      },
    ]);
  });

  it('never logs a key or a prompt, even when an upstream error echoes a key', async () => {
    const { logger, lines } = recording();
    const observer = accessLogObserver(redactingLogger(logger));
    const error = { status: 401, code: 'invalid_api_key', message: `Incorrect API key provided: ${UPSTREAM_KEY}` };
    await observer.onAttempt!(attemptEvent({ status: 'error', error, willRetry: true }));
    await observer.onUsage!(usageEvent({ status: 'error', httpStatus: 401, error }), clientRequest());
    expect(lines).toHaveLength(2);
    const written = JSON.stringify(lines);
    for (const secret of [CLIENT_KEY, UPSTREAM_KEY, PROMPT]) expect(written).not.toContain(secret);
  });
});
