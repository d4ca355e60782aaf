import { GatewayError, invalidRequest } from '../errors.js';
import { echo } from '../http/echo.js';
import { jsonResponse } from '../http/json-response.js';
import type { RequestLogReader, StatsQuery } from '../logs/request-log.js';
import { bucketRange, HOUR_MS } from '../logs/stats-series.js';
import { TOOL_CALL_OUTCOMES } from '../logs/tool-call-log.js';
import type { AdminQuery } from './admin-query.js';
import { adminRoute, type AdminRoute } from './admin-route.js';

/** The charts' default range: the last day. */
const DEFAULT_STATS_RANGE_MS = 24 * HOUR_MS;

/** `/logs`, `/tool-calls` and `/stats`: the request log, read back. 404 when the handler has no log (or for tool calls, one that keeps none). */
export const logRoutes: readonly AdminRoute[] = [
  adminRoute('GET', '/logs', async function listLogs({ log, query }) {
    const params = query(['keyId', 'model', 'status', 'from', 'to', 'limit', 'cursor']);
    const reader = readerOf(log);
    const { from, to } = timeRange(params);
    const page = await reader.query({
      keyId: params.text('keyId'),
      model: params.text('model'),
      status: params.status(),
      from,
      to,
      limit: params.limit(),
      cursor: params.text('cursor'),
    });
    return jsonResponse({ object: 'list', ...page });
  }),
  adminRoute('GET', '/tool-calls', async function listToolCalls({ log, query }) {
    const params = query(['keyId', 'server', 'tool', 'outcome', 'from', 'to', 'limit', 'cursor']);
    const reader = readerOf(log);
    if (!reader.queryToolCalls) throw new GatewayError({ status: 404, message: 'This request log keeps no tool calls.', code: 'not_found' });
    const page = await reader.queryToolCalls({
      keyId: params.text('keyId'),
      server: params.text('server'),
      tool: params.text('tool'),
      outcome: params.choice('outcome', TOOL_CALL_OUTCOMES),
      ...timeRange(params),
      limit: params.limit(),
      cursor: params.text('cursor'),
    });
    return jsonResponse({ object: 'list', ...page });
  }),
  adminRoute('GET', '/logs/:requestId', async function getLog({ log, params, query }) {
    query([]);
    const row = await readerOf(log).get(params.requestId!);
    if (!row)
      throw new GatewayError({ status: 404, message: `No request '${echo(params.requestId!)}' in the log.`, param: 'requestId', code: 'request_not_found' });
    return jsonResponse(row);
  }),
  adminRoute('GET', '/stats', async function stats({ log, query }) {
    const params = query(['from', 'to', 'bucket', 'by', 'keyId', 'model']);
    const reader = readerOf(log);
    const to = params.time('to') ?? Date.now();
    const from = params.time('from') ?? to - DEFAULT_STATS_RANGE_MS;
    const bucket = params.choice('bucket', ['hour', 'day']) ?? 'hour';
    const statsQuery: StatsQuery = {
      from,
      to,
      bucket,
      by: params.choice('by', ['model', 'key']) ?? 'model',
      keyId: params.text('keyId'),
      model: params.text('model'),
    };
    if (from >= to) throw invalidRequest(`Invalid 'from': it must be before 'to'.`, 'from', 'invalid_value');
    try {
      bucketRange(statsQuery);
    } catch (error) {
      throw invalidRequest(
        `Invalid 'from': ${(error as Error).message.replace(/^stats: /, '')}; narrow the range or use a wider bucket.`,
        'from',
        'invalid_value',
      );
    }
    return jsonResponse(await reader.stats(statsQuery));
  }),
];

/** `from` and `to`, `from` before `to` when both are given. */
function timeRange(params: AdminQuery): { from: number | undefined; to: number | undefined } {
  const { from, to } = { from: params.time('from'), to: params.time('to') };
  if (from !== undefined && to !== undefined && from >= to) throw invalidRequest(`Invalid 'from': it must be before 'to'.`, 'from', 'invalid_value');
  return { from, to };
}

function readerOf(log: RequestLogReader | undefined): RequestLogReader {
  if (!log) throw new GatewayError({ status: 404, message: 'This admin API has no request log.', code: 'not_found' });
  return log;
}
