import type { MetricsHandler } from '../metrics.js';
import type { AdminCredential } from './admin-credential.js';

/** The path the standalone server serves its metrics at, outside any `basePath` (where Prometheus looks by default). */
export const METRICS_PATH = '/metrics';

/**
 * `GET /metrics` for the admin credential only: 401 with `www-authenticate: Bearer` to anyone
 * else (a gateway key included), the Prometheus text otherwise.
 */
export function adminMetricsRoute(credential: AdminCredential, metrics: MetricsHandler): (request: Request) => Promise<Response> {
  return async function metricsRoute(request) {
    if (!credential.admits(request.headers.get('authorization'))) {
      return Response.json(
        { error: { message: 'The metrics need the admin key: Authorization: Bearer <admin key>.', type: 'invalid_request_error', code: 'invalid_admin_key' } },
        { status: 401, headers: { 'www-authenticate': 'Bearer' } },
      );
    }
    return metrics.fetch(request);
  };
}

/** Whether a Node request target (`/metrics`, `/metrics?x`) is the metrics path. */
export function isMetricsTarget(target: string | undefined): boolean {
  return target === METRICS_PATH || target?.startsWith(METRICS_PATH + '?') === true;
}
