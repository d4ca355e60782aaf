import { useMemo, useState } from 'preact/hooks';
import type { Stats, StatsPoint } from '../../logs/request-log.js';
import type { Api } from './api.js';
import { type ChartSeries, TimeChart } from './chart.js';
import { formatCount, formatMs, formatPercent, formatUsd } from './format.js';
import { html, type View } from './html.js';
import { useLoaded } from './use-loaded.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

const RANGES = {
  '24h': { label: 'Last 24 hours', span: DAY, bucket: 'hour' },
  '7d': { label: 'Last 7 days', span: 7 * DAY, bucket: 'hour' },
  '30d': { label: 'Last 30 days', span: 30 * DAY, bucket: 'day' },
} as const;

type Range = keyof typeof RANGES;
type By = 'model' | 'key';

interface LoadedStats {
  stats: Stats;
  from: number;
  to: number;
  bucketMs: number;
}

/** Spend, requests and errors over time by model or key, with the range's latency percentiles. */
export function Overview({ api }: { api: Api }): View {
  const [range, setRange] = useState<Range>('24h');
  const [by, setBy] = useState<By>('model');
  const stats = useLoaded(async (): Promise<LoadedStats> => {
    const { span, bucket } = RANGES[range];
    const to = api.now();
    const from = to - span;
    return { stats: await api.get<Stats>('stats', { from, to, bucket, by }), from, to, bucketMs: bucket === 'hour' ? HOUR : DAY };
  }, `${range}|${by}`);

  return html`<section aria-labelledby="overview-title">
    <h2 id="overview-title">Overview</h2>
    <form class="toolbar" onSubmit=${(event: Event) => event.preventDefault()}>
      <label>Range <select value=${range} onChange=${(event: Event) => setRange((event.target as HTMLSelectElement).value as Range)}>
        ${Object.entries(RANGES).map(([value, { label }]) => html`<option value=${value}>${label}</option>`)}
      </select></label>
      <label>Split by <select value=${by} onChange=${(event: Event) => setBy((event.target as HTMLSelectElement).value as By)}>
        <option value="model">Model</option>
        <option value="key">Key</option>
      </select></label>
      <button type="button" onClick=${stats.reload}>Refresh</button>
    </form>
    ${stats.error && html`<p role="alert" class="error">${stats.error}</p>`}
    ${stats.value && html`<${StatsView} loaded=${stats.value} by=${by} />`}
  </section>`;
}

function StatsView({ loaded, by }: { loaded: LoadedStats; by: By }): View {
  const { stats } = loaded;
  const xs = useMemo(() => bucketStarts(loaded), [loaded]);
  const charts = useMemo(() => {
    const column = (pick: (point: StatsPoint) => number): ChartSeries[] =>
      stats.series.map(({ name, points }) => {
        const byAt = new Map(points.map((point) => [point.at, point]));
        return { name, values: xs.map((at) => pick(byAt.get(at) ?? EMPTY_POINT)) };
      });
    const requests = column((point) => point.requests);
    const errors = column((point) => point.errors);
    const errorRate = xs.map((_, index) => {
      const total = sum(requests.map((entry) => entry.values[index] ?? 0));
      return total === 0 ? null : (sum(errors.map((entry) => entry.values[index] ?? 0)) / total) * 100;
    });
    return { spend: column((point) => point.costUsd), requests, errorRate: [{ name: 'Error rate', values: errorRate }] };
  }, [stats, xs]);
  const dimension = by === 'model' ? 'Model' : 'Key';
  const { totals } = stats;

  return html`
    <table class="totals"><caption>Totals</caption>
      <thead><tr><th scope="col">Spend</th><th scope="col">Requests</th><th scope="col">Errors</th><th scope="col">Error rate</th><th scope="col">Input tokens</th><th scope="col">Output tokens</th></tr></thead>
      <tbody><tr>
        <td>${formatUsd(totals.costUsd)}</td><td>${formatCount(totals.requests)}</td><td>${formatCount(totals.errors)}</td>
        <td>${formatPercent(totals.errors, totals.requests)}</td><td>${formatCount(totals.inputTokens)}</td><td>${formatCount(totals.outputTokens)}</td>
      </tr></tbody>
    </table>
    <div class="charts">
      <${TimeChart} title=${`Spend by ${dimension.toLowerCase()} (USD)`} xs=${xs} series=${charts.spend} kind="line" format=${formatUsd} />
      <${TimeChart} title=${`Requests by ${dimension.toLowerCase()}`} xs=${xs} series=${charts.requests} kind="bars" format=${formatCount} />
      <${TimeChart} title="Error rate (%)" xs=${xs} series=${charts.errorRate} kind="line" format=${formatRate} />
    </div>
    <table><caption>By ${dimension.toLowerCase()}</caption>
      <thead><tr><th scope="col">${dimension}</th><th scope="col">Spend</th><th scope="col">Requests</th><th scope="col">Errors</th><th scope="col">Input tokens</th><th scope="col">Output tokens</th></tr></thead>
      <tbody>
        ${stats.series.map(({ name, points }) => {
          const total = (pick: (point: StatsPoint) => number) => sum(points.map(pick));
          return html`<tr>
            <th scope="row">${name}</th><td>${formatUsd(total((point) => point.costUsd))}</td><td>${formatCount(total((point) => point.requests))}</td>
            <td>${formatCount(total((point) => point.errors))}</td><td>${formatCount(total((point) => point.inputTokens))}</td><td>${formatCount(total((point) => point.outputTokens))}</td>
          </tr>`;
        })}
        ${stats.series.length === 0 && html`<tr><td colspan="6">No requests in this range.</td></tr>`}
      </tbody>
    </table>
    <table><caption>Latency</caption>
      <thead><tr><th scope="col"></th><th scope="col">p50</th><th scope="col">p90</th><th scope="col">p99</th></tr></thead>
      <tbody>
        <tr><th scope="row">Latency</th><td>${formatMs(stats.latency.p50)}</td><td>${formatMs(stats.latency.p90)}</td><td>${formatMs(stats.latency.p99)}</td></tr>
        <tr><th scope="row">Time to first token</th><td>${formatMs(stats.ttft.p50)}</td><td>${formatMs(stats.ttft.p90)}</td><td>${formatMs(stats.ttft.p99)}</td></tr>
      </tbody>
    </table>`;
}

const EMPTY_POINT: StatsPoint = { at: 0, requests: 0, errors: 0, costUsd: 0, inputTokens: 0, outputTokens: 0 };

/** Every bucket of the range (UTC hours or days), so quiet buckets show as zero rather than a gap. */
function bucketStarts({ from, to, bucketMs }: LoadedStats): number[] {
  const starts: number[] = [];
  for (let at = Math.floor(from / bucketMs) * bucketMs; at < to; at += bucketMs) starts.push(at);
  return starts;
}

function sum(values: number[]): number {
  return values.reduce((total, value) => total + value, 0);
}

function formatRate(value: number): string {
  return `${value.toFixed(1)}%`;
}
