import type { LogPage, RequestLogRow } from '../../logs/request-log.js';
import type { Api, Query } from './api.js';
import { FilterButtons, timeOf, useFilters } from './filters.js';
import { formatCount, formatMs, formatTime, formatUsd } from './format.js';
import { html, type View } from './html.js';
import { useLoaded, usePaged } from './use-loaded.js';

const NO_FILTERS = { keyId: '', model: '', status: '', from: '', to: '' };
type LogFilters = typeof NO_FILTERS;

const STATUSES = ['ok', 'error', '400', '401', '403', '404', '408', '413', '429', '500', '502', '503', '504'];

/** The request log, newest first, with filters and "Load more". */
export function Logs({ api }: { api: Api }): View {
  const filters = useFilters(NO_FILTERS);
  const { applied, field } = filters;
  const log = usePaged((cursor) => api.get<LogPage>('logs', { ...queryOf(applied), limit: 50, cursor }), JSON.stringify(applied));

  return html`<section aria-labelledby="logs-title">
    <h2 id="logs-title">Request log</h2>
    <form class="filters" aria-label="Log filters" onSubmit=${filters.submit}>
      <label>Key id <input name="keyId" ...${field('keyId')} /></label>
      <label>Model <input name="model" ...${field('model')} /></label>
      <label>Status <select name="status" ...${field('status')}>
        <option value="">Any</option>
        ${STATUSES.map((status) => html`<option value=${status}>${status}</option>`)}
      </select></label>
      <label>From <input type="datetime-local" name="from" ...${field('from')} /></label>
      <label>To <input type="datetime-local" name="to" ...${field('to')} /></label>
      <${FilterButtons} filters=${filters} onRefresh=${log.reload} />
    </form>
    ${log.error && html`<p role="alert" class="error">${log.error}</p>`}
    ${log.rows && html`<${LogTable} rows=${log.rows} />`}
    ${log.hasMore && html`<button type="button" onClick=${log.loadMore}>Load more</button>`}
  </section>`;
}

function LogTable({ rows }: { rows: RequestLogRow[] }): View {
  return html`<table>
    <caption>Requests, newest first</caption>
    <thead><tr>
      <th scope="col">Time</th><th scope="col">Request</th><th scope="col">Key</th><th scope="col">Model</th><th scope="col">Status</th>
      <th scope="col">Tokens in / out</th><th scope="col">Cost</th><th scope="col">Latency</th>
    </tr></thead>
    <tbody>
      ${rows.map(
        (row) => html`<tr key=${row.requestId}>
          <td>${formatTime(row.startedAt)}</td>
          <td><a href=${`#/logs/${encodeURIComponent(row.requestId)}`}>${row.requestId}</a></td>
          <td>${row.keyId}</td>
          <td>${row.model}</td>
          <td class=${row.status === 'ok' ? 'ok' : 'error'}>${row.httpStatus} ${row.status}</td>
          <td>${formatCount(row.inputTokens)} / ${formatCount(row.outputTokens)}</td>
          <td>${formatUsd(row.costUsd)}</td>
          <td>${formatMs(row.latencyMs)}</td>
        </tr>`,
      )}
      ${rows.length === 0 && html`<tr><td colspan="8">No requests match.</td></tr>`}
    </tbody>
  </table>`;
}

/** The API's query: empty fields left out, the local date-times as ms since epoch. */
function queryOf(filters: LogFilters): Query {
  return { keyId: filters.keyId.trim(), model: filters.model.trim(), status: filters.status, from: timeOf(filters.from), to: timeOf(filters.to) };
}

/** Everything the log keeps of one request. */
export function LogDetail({ api, requestId }: { api: Api; requestId: string }): View {
  const detail = useLoaded(() => api.get<RequestLogRow>(`logs/${encodeURIComponent(requestId)}`), requestId);
  const row = detail.value;

  return html`<section aria-labelledby="detail-title">
    <h2 id="detail-title">Request ${requestId}</h2>
    <p><a href="#/logs">Back to the log</a></p>
    ${detail.error && html`<p role="alert" class="error">${detail.error}</p>`}
    ${row && html`<${RowDetail} row=${row} />`}
  </section>`;
}

function RowDetail({ row }: { row: RequestLogRow }): View {
  const fields: [string, string][] = [
    ['Started', formatTime(row.startedAt)],
    ['Key', `${row.keyId} (group ${row.keyGroup})`],
    ['Endpoint', row.endpoint],
    ['Kind', row.kind],
    ['Stream', row.stream ? 'yes' : 'no'],
    ['Model', row.model],
    ['Deployment', `${row.deployment} (${row.provider}, ${row.upstreamModel})`],
    ['Route reason', row.routeReason ?? '–'],
    ['Status', `${row.httpStatus} ${row.status}`],
    ['Error', row.errorCode === null ? '–' : `${row.errorCode}: ${row.errorMessage ?? ''}`],
    ['Cancelled', row.cancelled ? 'yes' : 'no'],
    ['Cached', row.cached ? 'yes' : 'no'],
    ['Finish reason', row.finishReason ?? '–'],
    ['Response id', row.responseId ?? '–'],
    ['Input tokens', formatCount(row.inputTokens)],
    ['Output tokens', formatCount(row.outputTokens)],
    ['Cached input tokens', formatCount(row.cachedInputTokens)],
    ['Cache write tokens', formatCount(row.cacheWriteTokens)],
    ['Reasoning tokens', formatCount(row.reasoningTokens)],
    ['Cost', formatUsd(row.costUsd)],
    ['Latency', formatMs(row.latencyMs)],
    ['Time to first token', formatMs(row.ttftMs)],
    ['Gateway overhead', formatMs(row.overheadMs)],
    ['Attempts', String(row.attempts)],
    ['Guardrails', row.guardrails?.join(' ') ?? '–'],
  ];
  return html`<dl class="detail">
      ${fields.map(([name, value]) => html`<div><dt>${name}</dt><dd>${value}</dd></div>`)}
    </dl>
    ${row.content?.request !== undefined && html`<h3>Request</h3><pre>${row.content.request}</pre>`}
    ${row.content?.response !== undefined && html`<h3>Response</h3><pre>${row.content.response}</pre>`}`;
}
