import { expect, it } from 'vitest';
import type { GuardrailOutcome } from '../../src/guardrails/checker.js';
import { metricsHandler } from '../../src/metrics.js';
import { metricsObserver } from '../../src/telemetry/metrics/metrics-observer.js';
import { parsePrometheus, sample } from '../helpers/prometheus.js';
import { recordingLogger } from '../helpers/recording-logger.js';
import { clientRequest, usageEvent } from './events.js';

/** Guardrail outcomes of hand-made usage events, scraped as Prometheus text. */
const outcome = (overrides: Partial<GuardrailOutcome>): GuardrailOutcome => ({
  guardrail: 'pii',
  phase: 'input',
  action: 'mask',
  outcome: 'passed',
  categories: [],
  findings: 0,
  durationMs: 0.2,
  ...overrides,
});

it('counts each guardrail check by name, phase and outcome, and times it per name and phase', async () => {
  const metrics = metricsHandler();
  const observer = metricsObserver({ meterProvider: metrics.meterProvider, models: [], logger: recordingLogger().logger });
  await observer.onUsage!(
    usageEvent({ guardrails: [outcome({ outcome: 'masked', categories: ['email'], findings: 1 }), outcome({ phase: 'output' })] }),
    clientRequest(),
  );
  await observer.onUsage!(usageEvent({ guardrails: [outcome({}), outcome({ phase: 'output', outcome: 'blocked', durationMs: 40 })] }), clientRequest());
  await observer.onUsage!(
    usageEvent({ guardrails: [outcome({ guardrail: 'moderation', phase: 'output', action: 'block', outcome: 'failed_open', durationMs: 2000 })] }),
    clientRequest(),
  );
  // A request no guardrail ran on adds nothing.
  await observer.onUsage!(usageEvent(), clientRequest());

  const text = await metrics.text();
  const checks = (labels: Record<string, string>) => sample(text, 'infergate_guardrail_checks_total', labels);
  expect(checks({ infergate_guardrail_name: 'pii', infergate_guardrail_phase: 'input', infergate_guardrail_outcome: 'masked' })).toBe(1);
  expect(checks({ infergate_guardrail_name: 'pii', infergate_guardrail_phase: 'input', infergate_guardrail_outcome: 'passed' })).toBe(1);
  expect(checks({ infergate_guardrail_name: 'pii', infergate_guardrail_phase: 'output', infergate_guardrail_outcome: 'passed' })).toBe(1);
  expect(checks({ infergate_guardrail_name: 'pii', infergate_guardrail_phase: 'output', infergate_guardrail_outcome: 'blocked' })).toBe(1);
  expect(checks({ infergate_guardrail_name: 'moderation', infergate_guardrail_phase: 'output', infergate_guardrail_outcome: 'failed_open' })).toBe(1);
  expect(checks({})).toBe(5);

  const duration = (name: string, labels: Record<string, string>) => sample(text, `infergate_guardrail_duration_${name}`, labels);
  expect(duration('count', { infergate_guardrail_name: 'pii', infergate_guardrail_phase: 'input' })).toBe(2);
  expect(duration('count', { infergate_guardrail_name: 'pii', infergate_guardrail_phase: 'output' })).toBe(2);
  expect(duration('sum', { infergate_guardrail_name: 'moderation', infergate_guardrail_phase: 'output' })).toBe(2);
  // Sub-millisecond local checks land in the fine buckets.
  expect(duration('bucket', { infergate_guardrail_name: 'pii', infergate_guardrail_phase: 'input', le: '0.00025' })).toBe(2);
  // Only configured names, phases and outcomes as labels: no key, request or model on these series.
  const labels = new Set(
    parsePrometheus(text)
      .filter((line) => line.name.startsWith('infergate_guardrail_'))
      .flatMap((line) => Object.keys(line.labels)),
  );
  expect([...labels].sort()).toEqual([
    'infergate_guardrail_name',
    'infergate_guardrail_outcome',
    'infergate_guardrail_phase',
    'le',
    'otel_scope_name',
    'otel_scope_version',
  ]);
  await metrics.shutdown();
});
