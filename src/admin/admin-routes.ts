import packageJson from '../../package.json' with { type: 'json' };
import { jsonResponse } from '../http/json-response.js';
import type { RequestLogReader, RequestLogSink } from '../logs/request-log.js';
import { adminRoute, type AdminRoute } from './admin-route.js';
import { keyRoutes } from './key-routes.js';
import { logRoutes } from './log-routes.js';

/** Every JSON route of the admin API, below its base path (docs/admin.md, "Admin API"). */
export const adminRoutes: readonly AdminRoute[] = [
  // The dashboard's login check: the key works, and what the stores are.
  adminRoute('GET', '/status', async function status({ keys, log, query }) {
    query([]);
    // The writing side's counters, when the reader is also the sink (the built-in logs are).
    const sink = (log as (RequestLogReader & Partial<RequestLogSink>) | undefined)?.sinkStats?.();
    return jsonResponse({ keyStore: keys.kind, requestLog: log?.kind ?? null, ...(sink ? { sink } : {}), version: packageJson.version });
  }),
  adminRoute('GET', '/health', async function deploymentHealth({ health, query }) {
    query([]);
    return jsonResponse({ deployments: health?.() ?? [] });
  }),
  ...keyRoutes,
  ...logRoutes,
];
