import { echo } from '../http/echo.js';
import { GatewayError, invalidRequest } from '../errors.js';
import { jsonResponse } from '../http/json-response.js';
import type { RouteContext } from '../http/route.js';
import { roundUsd } from '../pricing/usage-cost.js';
import { addDays, isDay, USAGE_RETENTION_DAYS, utcDay } from '../state/usage-store.js';

/** Days answered when the query names no `start`: the last 30, today included. */
const DEFAULT_DAYS = 30;

/**
 * GET /v1/usage: the caller's own key's requests, tokens and dollars by UTC day and model, from
 * the usage events (`?start=YYYY-MM-DD&end=YYYY-MM-DD`, both included; default the last 30 days).
 * Only the calling key's usage: no parameter reads another key's.
 */
export async function getUsage(context: RouteContext): Promise<Response> {
  const { options, key, url } = context;
  const store = options.usageStore;
  if (!store) throw new GatewayError({ status: 404, message: 'Usage is not recorded on this gateway.', code: 'not_found' });
  const end = dayParam(url.searchParams, 'end') ?? utcDay(Date.now());
  const start = dayParam(url.searchParams, 'start') ?? addDays(end, -(DEFAULT_DAYS - 1));
  if (start > end) throw invalidRequest(`Invalid 'start': ${start} is after 'end' (${end}).`, 'start', 'invalid_value');
  if (start < addDays(end, -(USAGE_RETENTION_DAYS - 1))) {
    throw invalidRequest(`Invalid 'start': a range spans at most ${USAGE_RETENTION_DAYS} days.`, 'start', 'invalid_value');
  }
  const rows = await store.list(key.id, start, end);
  const data = rows.map((row) => ({
    date: row.date,
    model: row.model,
    requests: row.requests,
    input_tokens: row.inputTokens,
    output_tokens: row.outputTokens,
    // A sum of float dollars, rounded as each event's cost is.
    cost_usd: roundUsd(row.costUsd),
  }));
  return jsonResponse({ object: 'list', data, start, end });
}

function dayParam(query: URLSearchParams, name: 'start' | 'end'): string | undefined {
  const value = query.get(name);
  if (value === null) return undefined;
  if (!isDay(value)) throw invalidRequest(`Invalid '${name}': expected a date YYYY-MM-DD, got '${echo(value)}'.`, name, 'invalid_value');
  return value;
}
