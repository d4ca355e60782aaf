import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Logger } from '../../src/logger.js';
import { attemptEvent, clientRequest, usageEvent } from './events.js';

/** `@opentelemetry/api` is an optional peer dependency: without it the observer warns once and stays quiet. */
describe('openTelemetryObserver without @opentelemetry/api', () => {
  afterEach(() => {
    vi.doUnmock('@opentelemetry/api');
    vi.resetModules();
  });

  it('logs one warning and turns into a no-op', async () => {
    vi.resetModules();
    vi.doMock('@opentelemetry/api', () => {
      throw new Error("Cannot find package '@opentelemetry/api'");
    });
    const { openTelemetryObserver } = await import('../../src/telemetry/otel-observer.js');
    const warnings: unknown[][] = [];
    const logger: Logger = { info() {}, warn: (...args) => void warnings.push(args), error() {} };
    const observer = openTelemetryObserver({ logger });

    for (const requestId of ['req_1', 'req_2', 'req_3']) {
      observer.onAttempt!(attemptEvent({ requestId }));
      await expect(observer.onUsage!(usageEvent({ requestId }), clientRequest())).resolves.toBeUndefined();
    }
    expect(warnings).toHaveLength(1);
    expect(warnings[0]![0]).toMatch(/@opentelemetry\/api could not be loaded/);
  });
});
