import { PrometheusSerializer } from '@opentelemetry/exporter-prometheus';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';

/**
 * `infergate/metrics`: Prometheus metrics for a host without an OpenTelemetry SDK of its own.
 *
 * ```ts
 * const metrics = metricsHandler();
 * const gateway = createGateway({ keys, metrics: { meterProvider: metrics.meterProvider } });
 * // mount metrics.fetch at GET /metrics (behind the host's own access control)
 * ```
 *
 * A host that runs the OpenTelemetry SDK passes `metrics: true` instead and exports through its
 * own readers (OTLP, its Prometheus exporter).
 */

/** The exposition format Prometheus asks for; `PrometheusSerializer` writes it. */
export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

export interface MetricsHandler {
  /** The meter provider the gateway records into (`createGateway({ metrics: { meterProvider } })`). */
  readonly meterProvider: MeterProvider;
  /** Answers a `GET` (or `HEAD`) with every metric in the Prometheus text format; 405 for other methods. */
  fetch(request: Request): Promise<Response>;
  /** The metrics as Prometheus text, as `fetch` answers them. */
  text(): Promise<string>;
  shutdown(): Promise<void>;
}

/** A meter provider read on demand: each scrape collects (cumulative, as Prometheus expects). */
export function metricsHandler(): MetricsHandler {
  const reader = new ScrapeReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  const serializer = new PrometheusSerializer();
  const text = async () => serializer.serialize((await reader.collect()).resourceMetrics);
  return {
    meterProvider,
    text,
    async fetch(request) {
      if (request.method !== 'GET' && request.method !== 'HEAD') return new Response(null, { status: 405, headers: { allow: 'GET, HEAD' } });
      const body = await text();
      return new Response(request.method === 'HEAD' ? null : body, { headers: { 'content-type': PROMETHEUS_CONTENT_TYPE } });
    },
    shutdown: () => meterProvider.shutdown(),
  };
}

/** A pull reader: nothing to flush or stop, the scrape collects. */
class ScrapeReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}
