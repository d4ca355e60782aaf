import type { Histogram, Meter, ObservableGauge } from '@opentelemetry/api';
import { CumulativeCounter } from './cumulative-counter.js';

/*
 * The gateway's instruments, after the OpenTelemetry GenAI semantic conventions where they have
 * one (gen_ai.client.token.usage, gen_ai.server.*; names, units and bucket boundaries as the
 * conventions recommend them), `infergate.*` for the gateway's own. docs/metrics.md lists each
 * with its attributes; the Prometheus names are these with `.` as `_` (and `_total` on counters).
 */

/** Durations of whole requests (seconds), the conventions' boundaries for request duration. */
const REQUEST_SECONDS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92];
const TOKENS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864];
const FIRST_TOKEN_SECONDS = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0];
const PER_OUTPUT_TOKEN_SECONDS = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5];
/** The gateway's own time is sub-millisecond when all is well: fine buckets from 50 µs. */
const OVERHEAD_SECONDS = [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1];
/** A local detector takes microseconds, a remote check tens of ms to seconds: both ends covered. */
/** The MCP conventions' boundaries for operation duration: tools run from milliseconds to minutes. */
const MCP_OPERATION_SECONDS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300];
const GUARDRAIL_SECONDS = [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

export interface Instruments {
  tokenUsage: Histogram;
  requestDuration: Histogram;
  timeToFirstToken: Histogram;
  timePerOutputToken: Histogram;
  overhead: Histogram;
  attempts: CumulativeCounter;
  fallbacks: CumulativeCounter;
  refusals: CumulativeCounter;
  cacheLookups: CumulativeCounter;
  cost: CumulativeCounter;
  guardrailChecks: CumulativeCounter;
  guardrailDuration: Histogram;
  mcpToolCalls: CumulativeCounter;
  mcpOperationDuration: Histogram;
  deploymentState: ObservableGauge;
}

export function createInstruments(meter: Meter): Instruments {
  const histogram = (name: string, unit: string, description: string, boundaries: number[]) =>
    meter.createHistogram(name, { unit, description, advice: { explicitBucketBoundaries: boundaries } });
  return {
    tokenUsage: histogram(
      'gen_ai.client.token.usage',
      '{token}',
      'Tokens used per request, by gen_ai.token.type (input, output), as the upstream billed them.',
      TOKENS,
    ),
    requestDuration: histogram('gen_ai.server.request.duration', 's', 'Time from the request reaching the gateway to the end of its answer.', REQUEST_SECONDS),
    timeToFirstToken: histogram('gen_ai.server.time_to_first_token', 's', 'Time to the first byte of a successful streamed answer.', FIRST_TOKEN_SECONDS),
    timePerOutputToken: histogram(
      'gen_ai.server.time_per_output_token',
      's',
      'Time per output token after the first, for successful streamed answers.',
      PER_OUTPUT_TOKEN_SECONDS,
    ),
    overhead: histogram(
      'infergate.overhead',
      's',
      "The gateway's own time per request: until the answer was ready (a stream: its headers), less the time waiting on upstreams and retry back-off.",
      OVERHEAD_SECONDS,
    ),
    attempts: new CumulativeCounter(meter, 'infergate.upstream.attempts', { unit: '{attempt}', description: 'Upstream attempts, by outcome.' }),
    fallbacks: new CumulativeCounter(meter, 'infergate.upstream.fallbacks', {
      unit: '{attempt}',
      description: 'Failed upstream attempts the gateway retried or moved on to another deployment from.',
    }),
    refusals: new CumulativeCounter(meter, 'infergate.admission.refusals', {
      unit: '{request}',
      description: "Requests refused by the key's rate limits, quota, balance or dollar budget.",
    }),
    cacheLookups: new CumulativeCounter(meter, 'infergate.cache.lookups', {
      unit: '{request}',
      description: 'Answers with the response cache on, by hit or miss.',
    }),
    cost: new CumulativeCounter(meter, 'infergate.cost', { unit: '{USD}', description: 'Dollars spent upstream, from the model price or the price catalog.' }),
    guardrailChecks: new CumulativeCounter(meter, 'infergate.guardrail.checks', {
      unit: '{check}',
      description: 'Guardrail checks, one per guardrail and phase of a request, by outcome (passed, masked, blocked, flagged, failed_open, failed_closed).',
    }),
    guardrailDuration: histogram(
      'infergate.guardrail.duration',
      's',
      "Time one guardrail spent checking one phase of a request (a stream's output: all its windows).",
      GUARDRAIL_SECONDS,
    ),
    mcpToolCalls: new CumulativeCounter(meter, 'infergate.mcp.tool_calls', {
      unit: '{call}',
      description: 'MCP tool calls through /mcp, by server, tool and outcome (ok, tool_error, refused, upstream_error, timeout, cancelled).',
    }),
    mcpOperationDuration: histogram(
      'mcp.server.operation.duration',
      's',
      'Time from the gateway taking a tools/call to its answer, the upstream call included.',
      MCP_OPERATION_SECONDS,
    ),
    deploymentState: meter.createObservableGauge('infergate.deployment.state', {
      unit: '1',
      description: "Each deployment's health state: 1 for the state it is in, 0 for the others.",
    }),
  };
}
