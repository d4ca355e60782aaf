import type { ToolCallPage, ToolCallRow } from '../../logs/tool-call-log.js';
import type { Api, Query } from './api.js';
import { FilterButtons, timeOf, useFilters } from './filters.js';
import { formatCount, formatMs, formatTime } from './format.js';
import { html, type View } from './html.js';
import { usePaged } from './use-loaded.js';

/** The MCP tool calls the request log keeps (`GET /admin/tool-calls`), newest first, with filters and "Load more". */

const NO_FILTERS = { keyId: '', server: '', tool: '', outcome: '', from: '', to: '' };
type ToolCallFilters = typeof NO_FILTERS;

// The outcomes of `TOOL_CALL_OUTCOMES`, written out: the page's bundle does not import the log's code.
const OUTCOMES = ['ok', 'tool_error', 'refused', 'upstream_error', 'timeout', 'cancelled'];

export function ToolCalls({ api }: { api: Api }): View {
  const filters = useFilters(NO_FILTERS);
  const { applied, field } = filters;
  const calls = usePaged((cursor) => api.get<ToolCallPage>('tool-calls', { ...queryOf(applied), limit: 50, cursor }), JSON.stringify(applied));

  return html`<section aria-labelledby="tool-calls-title">
    <h2 id="tool-calls-title">Tool calls</h2>
    <form class="filters" aria-label="Tool call filters" onSubmit=${filters.submit}>
      <label>Key id <input name="keyId" ...${field('keyId')} /></label>
      <label>Server <input name="server" ...${field('server')} /></label>
      <label>Tool <input name="tool" ...${field('tool')} /></label>
      <label>Outcome <select name="outcome" ...${field('outcome')}>
        <option value="">Any</option>
        ${OUTCOMES.map((outcome) => html`<option value=${outcome}>${outcome}</option>`)}
      </select></label>
      <label>From <input type="datetime-local" name="from" ...${field('from')} /></label>
      <label>To <input type="datetime-local" name="to" ...${field('to')} /></label>
      <${FilterButtons} filters=${filters} onRefresh=${calls.reload} />
    </form>
    ${calls.error && html`<p role="alert" class="error">${calls.error}</p>`}
    ${calls.rows && html`<${ToolCallTable} rows=${calls.rows} />`}
    ${calls.hasMore && html`<button type="button" onClick=${calls.loadMore}>Load more</button>`}
  </section>`;
}

function ToolCallTable({ rows }: { rows: ToolCallRow[] }): View {
  return html`<table>
    <caption>Tool calls, newest first</caption>
    <thead><tr>
      <th scope="col">Time</th><th scope="col">Key</th><th scope="col">Server</th><th scope="col">Tool</th><th scope="col">Outcome</th>
      <th scope="col">Duration</th><th scope="col">Bytes in / out</th><th scope="col">Error</th>
    </tr></thead>
    <tbody>
      ${rows.map(
        (row) => html`<tr key=${row.id}>
          <td>${formatTime(row.startedAt)}</td>
          <td>${row.keyId}</td>
          <td>${row.server}</td>
          <td>${row.tool}</td>
          <td class=${row.outcome === 'ok' ? 'ok' : 'error'}>${row.outcome}</td>
          <td>${formatMs(row.durationMs)}</td>
          <td>${formatCount(row.requestBytes)} / ${formatCount(row.responseBytes)}</td>
          <td>${row.error ?? '–'}</td>
        </tr>`,
      )}
      ${rows.length === 0 && html`<tr><td colspan="8">No tool calls match.</td></tr>`}
    </tbody>
  </table>`;
}

/** The API's query: empty fields left out, the local date-times as ms since epoch. */
function queryOf(filters: ToolCallFilters): Query {
  return {
    keyId: filters.keyId.trim(),
    server: filters.server.trim(),
    tool: filters.tool.trim(),
    outcome: filters.outcome,
    from: timeOf(filters.from),
    to: timeOf(filters.to),
  };
}
