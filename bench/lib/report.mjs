// The Markdown report of a run: targets first, then every arm's numbers (medians across rounds,
// with the spread min–max when there was more than one round).
import { cells } from './payloads.mjs';
import { peerSpecs } from './peer.mjs';

/** @param {number | null | undefined} v @param {number} [digits] */
function num(v, digits = 0) {
  if (v === null || v === undefined || !Number.isFinite(v)) return '–';
  return v.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** A median with its range across rounds. @param {{ median: number, min: number, max: number, n: number } | undefined} s @param {number} [digits] */
function med(s, digits = 0) {
  if (!s || !Number.isFinite(s.median)) return '–';
  if (s.n <= 1) return num(s.median, digits);
  return `${num(s.median, digits)} <sub>${num(s.min, digits)}–${num(s.max, digits)}</sub>`;
}

/** How an arm is named in reports: a peer by its project. @param {string} arm */
export function armTitle(arm) {
  return Object.hasOwn(peerSpecs, arm) ? `${peerSpecs[/** @type {keyof typeof peerSpecs} */ (arm)].title} (peer)` : arm;
}

/** Reports list arms in this order. */
export const armOrder = ['direct', 'floor', 'infergate', 'infergate-metrics', 'infergate-regex', 'infergate-secrets', ...Object.keys(peerSpecs)];

/** @param {string} key */
export function label(key) {
  const [arm = '', cell, mode] = key.split('/');
  const spec = cells[/** @type {string} */ (cell)];
  if (arm === 'direct' || arm === 'floor') return `${arm} (${spec?.upstream} upstream)${mode ? ` ${mode}` : ''}`;
  return `${armTitle(arm)}: ${spec?.label ?? cell}${mode ? ` ${mode}` : ''}`;
}

/** @param {any} result */
export function renderMarkdown(result) {
  const { meta, validity, targets, summary, added, capacity, image, startRss, idleRss, endRss, failures } = result;
  const lines = [];
  lines.push(`### Benchmark run ${meta.date.slice(0, 10)} (${meta.mode}${meta.mode === 'quick' ? ' smoke run — noisy, not a measurement' : ''})`);
  lines.push('');
  lines.push(
    `Machine: ${meta.machine.cpu}, ${meta.machine.cores} cores, ${meta.machine.memoryGB} GB, ${meta.machine.os}; Node ${meta.machine.node}. Commit \`${meta.commit}\`${meta.dirty ? ' (with uncommitted changes in src/)' : ''}${meta.dist ? `; the gateway ran the build in ${meta.dist} (INFERGATE_DIST)` : ''}. ` +
      `Processes ${meta.pinned ? 'pinned: gateway/floor/peers on core 1, mock + load generator on core 0' : 'NOT pinned'}. ` +
      `Load average at start ${meta.loadavgStart.map((/** @type {number} */ l) => l.toFixed(2)).join(' ')}, at end ${meta.loadavgEnd.map((/** @type {number} */ l) => l.toFixed(2)).join(' ')}. ` +
      `${meta.options.rounds} round(s), ${meta.options.windowMs} ms windows. Peers: ${Object.entries(meta.peers ?? { peer: meta.peer })
        .map(([name, status]) => `${name}: ${status}`)
        .join('; ')}.`,
  );
  lines.push('');
  lines.push(
    `Run ${validity.valid ? 'valid' : '**INVALID**'}: direct ${num(validity.headroom.directRps)} req/s vs best gateway arm ${num(validity.headroom.bestGatewayRps)} req/s (${num(validity.headroom.ratio, 2)}×, needs ≥ 2×).`,
  );
  for (const note of validity.notes) lines.push(`- ${note}`);
  lines.push('');

  lines.push('| metric | target | result | |');
  lines.push('|---|---|---|---|');
  for (const t of targets) {
    const range = t.spread && t.spread.n > 1 ? ` <sub>${num(t.spread.min, 2)}–${num(t.spread.max, 2)}</sub>` : '';
    const digits = t.unit === '×' ? 2 : t.unit === 'ms' || t.unit === 'KB' || t.unit === 'MB' ? 1 : 0;
    const verdict = t.pass === undefined ? 'not run' : t.pass ? 'ok' : '**missed**';
    lines.push(`| ${t.metric} | ${t.target} | ${num(t.value, digits)} ${t.unit}${range}${t.note ? ` (${t.note})` : ''} | ${verdict} |`);
  }
  lines.push('');

  const keys = Object.keys(summary);
  const order = (/** @type {string} */ k) => armOrder.indexOf(k.split('/')[0] ?? '');
  const jsonKeys = keys.filter((k) => k.endsWith('/json')).sort((a, b) => order(a) - order(b) || a.localeCompare(b));
  const streamKeys = keys.filter((k) => k.endsWith('/stream')).sort((a, b) => order(a) - order(b) || a.localeCompare(b));

  lines.push(
    '**JSON requests.** Max RPS at 64 connections; CPU = the arm process’s CPU time / requests at max RPS; core = its core’s busy share then. Latency in ms, closed loop at 1 and 16 connections; open loop at 1,000 req/s measured from the scheduled send time. “+” = minus the direct arm.',
  );
  lines.push('');
  lines.push('| arm | max RPS | CPU µs/req | core | p50 / p99 @1 | +p50 / +p99 @1 | p50 / p99 @16 | +p50 / +p99 @16 | open-loop p99 (+) | errors |');
  lines.push('|---|---|---|---|---|---|---|---|---|---|');
  for (const key of jsonKeys) {
    const s = summary[key];
    const a = added[key] ?? {};
    lines.push(
      `| ${label(key)} | ${med(s.rps)} | ${med(s.cpuUsPerReq)} | ${s.armCoreBusy && Number.isFinite(s.armCoreBusy.median) ? `${num(s.armCoreBusy.median * 100)}%` : '–'} | ${med(s.c1p50, 3)} / ${med(s.c1p99, 3)} | ${med(a.c1p50, 3)} / ${med(a.c1p99, 3)} | ${med(s.c16p50, 3)} / ${med(s.c16p99, 3)} | ${med(a.c16p50, 3)} / ${med(a.c16p99, 3)} | ${med(s.openP99, 2)} (${med(a.openP99, 2)}) | ${med(s.errors)} |`,
    );
  }
  lines.push('');
  lines.push(
    `**Streams**, times in ms. TTFC = time to first chunk, from the request's send to the first whole SSE frame: one stream at a time, and under load (${meta.options.pacedConcurrency} streams at once, 20 chunks 20 ms apart), where the p99 gap between chunk arrivals is taken too. Burst: 200 chunks written at once, 16 streams at a time — upstream chunks relayed per second, and the arm's CPU µs per upstream chunk.`,
  );
  lines.push('');
  lines.push('| arm | TTFC p50 / p99 @1 | +TTFC p50 / p99 @1 | TTFC p50 loaded (+) | gap p99 loaded (+) | burst chunks/s | CPU µs/chunk | core | lost |');
  lines.push('|---|---|---|---|---|---|---|---|---|');
  for (const key of streamKeys) {
    const s = summary[key];
    const a = added[key] ?? {};
    lines.push(
      `| ${label(key)} | ${med(s.ttfcP50, 3)} / ${med(s.ttfcP99, 3)} | ${med(a.ttfcP50, 3)} / ${med(a.ttfcP99, 3)} | ${med(s.loadedTtfcP50, 2)} (${med(a.loadedTtfcP50, 2)}) | ${med(s.gapP99, 2)} (${med(a.gapP99, 2)}) | ${med(s.burstChunksPerSec)} | ${med(s.cpuUsPerChunk, 2)} | ${s.armCoreBusy && Number.isFinite(s.armCoreBusy.median) ? `${num(s.armCoreBusy.median * 100)}%` : '–'} | ${med(s.errors)} |`,
    );
  }
  lines.push('');

  if (Object.keys(capacity).length) {
    lines.push(
      '**Paced streams held** (each 50 chunks/s; streams opened over ≤ 2 s, then held). Held = every stream complete with no lost chunk; on time = held and the gap between chunks p99 ≤ 2 intervals. RSS per stream = (peak RSS with every stream open − RSS before) / streams. When the direct arm is late too, the load side is the limit at that step.',
    );
    lines.push('');
    lines.push('| arm | max held | max on time | steps (streams: gap p99 ms, streams with lost chunks, KB RSS/stream) |');
    lines.push('|---|---|---|---|');
    for (const [key, c] of Object.entries(capacity)) {
      const steps = c.steps
        .map(
          (/** @type {any} */ s) =>
            `${s.count}: ${num(s.gapP99, 1)}, ${s.lost}${Number.isFinite(s.rssPerStream) ? `, ${num(s.rssPerStream / 1024, 1)}` : ''}${s.held ? (s.onTime ? '' : ' (late)') : ' ✗'}`,
        )
        .join('; ');
      lines.push(`| ${label(key)} | ${num(c.maxHeld)} | ${num(c.maxOnTime)} | ${steps} |`);
    }
    lines.push('');
  }

  if (image.length) {
    lines.push('**Big image requests during 200 paced streams** (infergate; the image is random bytes, base64 inline).');
    lines.push('');
    lines.push('| cell | image | body | status | latency ms | event-loop max ms | worst stream gap ms | streams lost |');
    lines.push('|---|---|---|---|---|---|---|---|');
    for (const r of image) {
      lines.push(
        `| ${cells[r.cell]?.label ?? r.cell} | ${num(r.imageBytes / 2 ** 20)} MB | ${num(r.bodyBytes / 2 ** 20, 1)} MB | ${r.status}${r.error ? ` ${String(r.error).slice(0, 60)}` : ''} | ${num(r.latencyMs)} | ${num(r.eldMaxMs, 1)} | ${num(r.streamGapMaxMs, 1)} | ${r.streamsLost} |`,
      );
    }
    lines.push('');
  }

  const mb = (/** @type {Record<string, number>} */ rss) =>
    Object.entries(rss)
      .map(([arm, v]) => `${armTitle(arm)} ${num(v / 2 ** 20, 1)} MB`)
      .join(', ');
  lines.push(
    `**Memory (RSS).** Started, idle: ${mb(startRss)}. After warm-up, idle: ${mb(idleRss)}. At the end of the run: right after the last phase ${mb(result.endRssAtOnce ?? {})}; after a few idle seconds ${mb(endRss)}.`,
  );
  const failed = Object.entries(failures);
  if (failed.length) {
    lines.push('');
    lines.push('**Failed units:**');
    for (const [key, why] of failed) lines.push(`- ${key}: ${why}`);
  }
  lines.push('');
  return lines.join('\n');
}
