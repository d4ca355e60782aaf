// The scale-out run's picture, `scale-out.svg`: for each Redis topology × gateway processes,
// requests per second over all processes, the gateways' CPU per request and p99 latency, as
// horizontal bars drawn by the benchmark chart's panel (chart.mjs).
import { chartHead, drawPanel, escapeXml, ROW_HEIGHT } from './chart.mjs';

/** Okabe–Ito colours, as in chart.mjs. @type {Record<string, string>} */
const TOPOLOGY_COLOURS = { single: '#0072B2', cluster: '#E69F00' };
const TOPOLOGY_NAMES = { single: 'one Redis', cluster: 'Redis Cluster, 3 masters' };

const WIDTH = 1200;
const LABEL_WIDTH = 200;
const PANEL_GAP = 30;
const RIGHT_MARGIN = 60;

/** @param {any} result the object scale-out.mjs writes to scale-out.json */
export function renderScaleOutChart(result) {
  const { meta, results } = result;
  const rows = results.map((/** @type {any} */ r) => ({
    arm: r.topology,
    colour: TOPOLOGY_COLOURS[/** @type {'single' | 'cluster'} */ (r.topology)],
    title: `${TOPOLOGY_NAMES[/** @type {'single' | 'cluster'} */ (r.topology)]}, ${r.processes} gateway process${r.processes === 1 ? '' : 'es'}`,
    processes: r.processes,
    summary: r.summary,
  }));
  const panelWidth = (WIDTH - LABEL_WIDTH - 2 * PANEL_GAP - 3 * RIGHT_MARGIN) / 3;
  const legendY = 82;
  const panelY = 120;
  const rowsTop = panelY + 34;
  const footY = rowsTop + rows.length * ROW_HEIGHT + 40;
  const o = meta.options;
  const loads = results.flatMap((/** @type {any} */ r) => r.windows.map((/** @type {any} */ w) => w.loadAverage)).filter(Number.isFinite);
  const footnotes = [
    `All processes share ${meta.machine.cores} cores, unpinned: the gateways, the Redis server(s), the mock upstream and this client (one process).`,
    `Closed loop, ${o.concurrency} requests in flight over all gateways, each request to the next gateway in turn; JSON chat completions, each admitted and settled on Redis.`,
    `Bars: median of ${o.rounds} round${o.rounds === 1 ? '' : 's'} (every configuration warmed up first, then measured ${o.windowMs / 1000} s once a round, in a random order); whiskers: min–max.`,
    `Load average (1 min) while measuring: ${loads.length ? `${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)}` : '–'} on ${meta.machine.cores} cores${Math.max(...loads) > meta.machine.cores ? ': other work took much of the machine' : ''}.`,
    ...(o.quick ? ['Quick smoke run: one short window, numbers are noisy.'] : []),
  ];
  const height = footY + footnotes.length * 16 + 12;
  const subtitle = [
    meta.date?.slice(0, 10),
    `commit ${meta.commit}${meta.dist ? ' (gateway: the INFERGATE_DIST build)' : meta.dirty ? ' (dirty)' : ''}`,
    `${meta.machine?.cpu}, ${meta.machine?.cores} cores, Node ${meta.machine?.node}`,
  ].join(' · ');

  const out = chartHead({
    width: WIDTH,
    height,
    title: 'infergate scale-out: requests per second, CPU per request and p99 latency, by Redis topology and gateway processes',
    heading: 'Gateway processes sharing one Redis, behind a round-robin client',
    subtitle,
  });
  let lx = 20;
  for (const name of [...new Set(rows.map((/** @type {any} */ r) => r.arm))]) {
    const label = TOPOLOGY_NAMES[/** @type {'single' | 'cluster'} */ (name)] ?? name;
    out.push(`<rect x="${lx}" y="${legendY - 10}" width="12" height="12" fill="${TOPOLOGY_COLOURS[name] ?? '#CC79A7'}"/>`);
    out.push(`<text x="${lx + 17}" y="${legendY}" font-size="12" fill="#222">${escapeXml(label)}</text>`);
    lx += 17 + label.length * 7 + 22;
  }
  rows.forEach((/** @type {any} */ row, /** @type {number} */ i) => {
    const cy = rowsTop + i * ROW_HEIGHT + ROW_HEIGHT / 2;
    if (i % 2 === 0) out.push(`<rect x="12" y="${cy - ROW_HEIGHT / 2}" width="${WIDTH - 24}" height="${ROW_HEIGHT}" fill="#f6f7f9"/>`);
    out.push(`<rect x="20" y="${cy - 13}" width="10" height="10" fill="${row.colour}"/>`);
    out.push(`<text x="35" y="${cy - 4}" font-size="12" font-weight="600" fill="#111">${row.processes} process${row.processes === 1 ? '' : 'es'}</text>`);
    out.push(
      `<text x="35" y="${cy + 11}" font-size="11.5" fill="#333">${escapeXml(TOPOLOGY_NAMES[/** @type {'single' | 'cluster'} */ (row.arm)] ?? row.arm)}</text>`,
    );
  });
  /** @type {Array<{ title: string, note: string, pick: (row: any) => any }>} */
  const panels = [
    { title: 'Requests per second, all processes', note: 'higher is better', pick: (row) => row.summary.totalRps },
    { title: 'Gateway CPU µs per request', note: 'all gateway processes’ CPU / requests; lower is better', pick: (row) => row.summary.gatewayCpuUsPerRequest },
    { title: 'Latency p99 (ms)', note: 'request sent → whole answer; lower is better', pick: (row) => row.summary.p99 },
  ];
  panels.forEach((panel, i) => {
    out.push(drawPanel({ x: LABEL_WIDTH + i * (panelWidth + RIGHT_MARGIN + PANEL_GAP), y: panelY, width: panelWidth, rows, ...panel }));
  });
  footnotes.forEach((line, i) => {
    out.push(`<text x="20" y="${footY + i * 16}" font-size="11" fill="#555">${escapeXml(line)}</text>`);
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
