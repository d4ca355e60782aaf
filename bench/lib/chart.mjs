// The run's picture, `latest.svg`: for every arm × cell that streamed, the CPU µs it spent per
// upstream chunk and the time it added to the first chunk, as horizontal bars (median across
// rounds) with min–max whiskers. A hand-written SVG string: no dependency, readable in a diff.
import { cells } from './payloads.mjs';
import { armOrder, armTitle } from './report.mjs';

/** Okabe–Ito colours, told apart with any colour vision. @type {Record<string, string>} */
const ARM_COLOURS = { floor: '#999999', infergate: '#0072B2', peer: '#E69F00', ccr: '#009E73' };
const FALLBACK_COLOUR = '#CC79A7';
// Named sans fonts before the generic one: some renderers (resvg) fall back to a serif otherwise.
// Unquoted: quotes inside the attribute make resvg drop the whole list.
const FONT = 'system-ui, -apple-system, Segoe UI, Helvetica, Arial, Liberation Sans, DejaVu Sans, sans-serif';

const WIDTH = 1000;
const LABEL_WIDTH = 290;
const PANEL_GAP = 40;
const RIGHT_MARGIN = 60; // room for the value printed past the longest whisker
export const ROW_HEIGHT = 36;
const BAR_HEIGHT = 16;

/** @typedef {{ median: number, min: number, max: number, n: number }} Spread */
/** @typedef {{ key: string, arm: string, cell: string, cpu?: Spread, ttfc?: Spread, failed?: boolean }} Row */
/**
 * A row a panel can draw: its bar's colour is the arm's unless `colour` is set, its tooltip names
 * the arm and cell unless `title` is set (other charts than this one's, e.g. scale-out-chart.mjs).
 * @typedef {{ arm: string, cell?: string, colour?: string, title?: string, failed?: boolean }} PanelRow
 */

/** Escapes text for an SVG text node or attribute. @param {string} text */
export function escapeXml(text) {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c] ?? c);
}

/** A number short enough for a bar's end. @param {number} v */
function short(v) {
  const abs = Math.abs(v);
  const digits = abs >= 100 ? 0 : abs >= 10 ? 1 : 2;
  return v.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/**
 * Axis ticks: about five round steps (1, 2 or 5 × 10^k) covering [lo, hi], with 0 among them.
 * @param {number} lo @param {number} hi
 */
export function niceTicks(lo, hi) {
  const from = Math.min(0, lo);
  const to = Math.max(0, hi, from + 1e-9);
  const rough = (to - from) / 5;
  const power = 10 ** Math.floor(Math.log10(rough));
  const step = ([1, 2, 5, 10].find((m) => m * power >= rough) ?? 10) * power;
  const ticks = [];
  for (let v = Math.floor(from / step) * step; v < to + step * 0.999; v += step) ticks.push(Number(v.toPrecision(12)));
  return ticks;
}

/** @param {Spread | undefined} s */
const measured = (s) => s !== undefined && Number.isFinite(s.median);

/**
 * One panel: a title, vertical grid lines with their tick labels, and per row a bar and whisker.
 * @template {PanelRow} R
 * @param {{ x: number, y: number, width: number, title: string, note: string, rows: R[], pick: (row: R) => Spread | undefined }} panel
 */
export function drawPanel({ x, y, width, title, note, rows, pick }) {
  const spreads = rows
    .map(pick)
    .filter(measured)
    .map((s) => /** @type {Spread} */ (s));
  const lo = Math.min(0, ...spreads.map((s) => (Number.isFinite(s.min) ? s.min : s.median)));
  const hi = Math.max(0, ...spreads.map((s) => (Number.isFinite(s.max) ? s.max : s.median)));
  const ticks = niceTicks(lo, hi);
  const from = /** @type {number} */ (ticks[0]);
  const to = /** @type {number} */ (ticks[ticks.length - 1]);
  const step = /** @type {number} */ (ticks[1]) - from;
  const tickDigits = Math.max(0, -Math.floor(Math.log10(step) + 1e-9));
  const scale = (/** @type {number} */ v) => x + ((v - from) / (to - from)) * width;
  const top = y + 34;
  const bottom = top + rows.length * ROW_HEIGHT;
  const out = [];
  out.push(`<text x="${x}" y="${y}" font-size="13" font-weight="600" fill="#111">${escapeXml(title)}</text>`);
  out.push(`<text x="${x}" y="${y + 17}" font-size="11" fill="#555">${escapeXml(note)}</text>`);
  for (const tick of ticks) {
    const tx = scale(tick).toFixed(1);
    out.push(`<line x1="${tx}" y1="${top}" x2="${tx}" y2="${bottom}" stroke="${tick === 0 ? '#888' : '#e3e3e3'}" stroke-width="1"/>`);
    out.push(`<text x="${tx}" y="${bottom + 15}" font-size="11" fill="#444" text-anchor="middle">${tick.toFixed(tickDigits)}</text>`);
  }
  rows.forEach((row, i) => {
    const s = pick(row);
    const cy = top + i * ROW_HEIGHT + ROW_HEIGHT / 2;
    if (!s || !measured(s)) {
      const why = row.failed ? 'failed: see latest.md' : 'not measured';
      out.push(`<text x="${scale(0) + 4}" y="${cy + 4}" font-size="11" fill="#888" font-style="italic">${why}</text>`);
      return;
    }
    const x0 = scale(Math.min(0, s.median));
    const x1 = scale(Math.max(0, s.median));
    const colour = row.colour ?? ARM_COLOURS[row.arm] ?? FALLBACK_COLOUR;
    const name = row.title ?? `${armTitle(row.arm)}, ${cells[row.cell ?? '']?.label ?? row.cell}`;
    out.push(
      `<rect x="${x0.toFixed(1)}" y="${(cy - BAR_HEIGHT / 2).toFixed(1)}" width="${Math.max(1, x1 - x0).toFixed(1)}" height="${BAR_HEIGHT}" fill="${colour}"><title>${escapeXml(`${name}: median ${short(s.median)}, min ${short(s.min)}, max ${short(s.max)} (${s.n} round${s.n === 1 ? '' : 's'})`)}</title></rect>`,
    );
    let end = Math.max(x1, scale(s.median));
    if (s.n > 1 && Number.isFinite(s.min) && Number.isFinite(s.max)) {
      const wmin = scale(s.min).toFixed(1);
      const wmax = scale(s.max).toFixed(1);
      out.push(`<line x1="${wmin}" y1="${cy}" x2="${wmax}" y2="${cy}" stroke="#222" stroke-width="1.2"/>`);
      for (const wx of [wmin, wmax]) out.push(`<line x1="${wx}" y1="${cy - 5}" x2="${wx}" y2="${cy + 5}" stroke="#222" stroke-width="1.2"/>`);
      end = Math.max(end, scale(s.max));
    }
    out.push(`<text x="${(end + 5).toFixed(1)}" y="${cy + 4}" font-size="11" fill="#111">${escapeXml(short(s.median))}</text>`);
  });
  return out.join('\n');
}

/**
 * The opening of a chart: the `<svg>` element, its accessible title, a white ground, a heading and
 * a subtitle line. The caller pushes the rest and `</svg>`.
 * @param {{ width: number, height: number, title: string, heading: string, subtitle: string }} head
 */
export function chartHead({ width, height, title, heading, subtitle }) {
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="${escapeXml(FONT)}" role="img" aria-labelledby="chart-title">`,
    `<title id="chart-title">${escapeXml(title)}</title>`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="20" y="32" font-size="19" font-weight="700" fill="#111">${escapeXml(heading)}</text>`,
    `<text x="20" y="54" font-size="12" fill="#444">${escapeXml(subtitle)}</text>`,
  ];
}

/**
 * The SVG of a run's streaming results (the object `bench/run.mjs` writes to latest.json).
 * @param {any} result
 */
export function renderChart(result) {
  const { meta, summary, added, validity, failures = {} } = result;
  const cellOrder = Object.keys(cells);
  // Stream units that failed in every round keep their row, so that a peer's failure shows.
  const keys = new Set([...Object.keys(summary), ...Object.keys(failures).filter((key) => key.split('/').length === 3)]);
  /** @type {Row[]} */
  const rows = [...keys]
    .filter((key) => key.endsWith('/stream') && !key.startsWith('direct/'))
    .map((key) => {
      const [arm = '', cell = ''] = key.split('/');
      return { key, arm, cell, cpu: summary[key]?.cpuUsPerChunk, ttfc: added[key]?.ttfcP50, failed: key in failures };
    })
    .sort((a, b) => armOrder.indexOf(a.arm) - armOrder.indexOf(b.arm) || cellOrder.indexOf(a.cell) - cellOrder.indexOf(b.cell));

  const rounds = meta.options?.rounds ?? 1;
  const panelWidth = (WIDTH - LABEL_WIDTH - PANEL_GAP - RIGHT_MARGIN * 2) / 2;
  const legendY = 82;
  const panelY = 120;
  const rowsTop = panelY + 34;
  const axisBottom = rowsTop + rows.length * ROW_HEIGHT;
  const footY = axisBottom + 40;
  const footnotes = [
    'CPU: the arm process’s CPU time over upstream chunks relayed, in bursts of 200 chunks, 16 streams at once.',
    'Added time to first chunk: request sent → first whole SSE frame, minus the direct arm’s (client → mock) in the same round.',
    'Gateway, floor and peers each run as one process pinned to the same core; mock and load generator on the other.',
    ...(validity && !validity.valid ? ['INVALID run: the direct arm was not 2× the best gateway arm (the load side may be the limit).'] : []),
    ...(meta.mode === 'quick' ? ['Quick smoke run: one short round, numbers are noisy.'] : []),
  ];
  const height = footY + footnotes.length * 16 + 12;

  const arms = [...new Set(rows.map((r) => r.arm))];
  const subtitle = [
    meta.date?.slice(0, 10),
    `commit ${meta.commit}${meta.dist ? ' (gateway: the INFERGATE_DIST build)' : meta.dirty ? ' (dirty)' : ''}`,
    `${meta.machine?.cpu}, ${meta.machine?.cores} cores, Node ${meta.machine?.node}`,
    `bars: median of ${rounds} round${rounds === 1 ? '' : 's'}${rounds > 1 ? ', whiskers: min–max' : ''}`,
  ].join(' · ');

  const out = chartHead({
    width: WIDTH,
    height,
    title: 'infergate benchmark: CPU per upstream chunk and added time to first chunk, per arm and cell',
    heading: 'What a stream costs each arm — lower is better',
    subtitle,
  });

  let lx = 20;
  for (const arm of arms) {
    const name = armTitle(arm);
    out.push(`<rect x="${lx}" y="${legendY - 10}" width="12" height="12" fill="${ARM_COLOURS[arm] ?? FALLBACK_COLOUR}"/>`);
    out.push(`<text x="${lx + 17}" y="${legendY}" font-size="12" fill="#222">${escapeXml(name)}</text>`);
    lx += 17 + name.length * 7 + 22;
  }

  rows.forEach((row, i) => {
    const cy = rowsTop + i * ROW_HEIGHT + ROW_HEIGHT / 2;
    if (i % 2 === 0) out.push(`<rect x="12" y="${cy - ROW_HEIGHT / 2}" width="${WIDTH - 24}" height="${ROW_HEIGHT}" fill="#f6f7f9"/>`);
    const cellName = row.arm === 'floor' ? `${cells[row.cell]?.upstream} upstream (bare Node proxy)` : (cells[row.cell]?.label ?? row.cell);
    out.push(`<rect x="20" y="${cy - 13}" width="10" height="10" fill="${ARM_COLOURS[row.arm] ?? FALLBACK_COLOUR}"/>`);
    out.push(`<text x="35" y="${cy - 4}" font-size="12" font-weight="600" fill="#111">${escapeXml(armTitle(row.arm))}</text>`);
    out.push(`<text x="35" y="${cy + 11}" font-size="11.5" fill="#333">${escapeXml(cellName)}</text>`);
  });

  const leftX = LABEL_WIDTH;
  const rightX = LABEL_WIDTH + panelWidth + RIGHT_MARGIN + PANEL_GAP;
  out.push(
    drawPanel({
      x: leftX,
      y: panelY,
      width: panelWidth,
      title: 'CPU µs per upstream chunk',
      note: 'burst streams, the arm’s own process',
      rows,
      pick: (r) => r.cpu,
    }),
  );
  out.push(
    drawPanel({
      x: rightX,
      y: panelY,
      width: panelWidth,
      title: 'Added time to first chunk, p50 (ms)',
      note: 'one stream at a time, minus the direct arm',
      rows,
      pick: (r) => r.ttfc,
    }),
  );
  footnotes.forEach((line, i) => {
    out.push(`<text x="20" y="${footY + i * 16}" font-size="11" fill="#555">${escapeXml(line)}</text>`);
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
