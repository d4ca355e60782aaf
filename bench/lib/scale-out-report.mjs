// The scale-out run as markdown (`scale-out.md`): one row per topology × processes.
import { FAILURES_TO_OPEN } from './scale-out-keys.mjs';

const int = (/** @type {number} */ v) => (Number.isFinite(v) ? Math.round(v).toLocaleString('en-US') : '–');
const ms = (/** @type {number} */ v) => (Number.isFinite(v) ? v.toFixed(1) : '–');
const pct = (/** @type {number} */ v) => (Number.isFinite(v) ? `${Math.round(v)}%` : '–');

/** @param {{ median: number, min: number, max: number, n: number }} s */
const spread = (s) => (s.n > 1 ? `${int(s.median)} (${int(s.min)}–${int(s.max)})` : int(s.median));

/** @param {any} result the object scale-out.mjs writes to scale-out.json */
export function renderScaleOutMarkdown(result) {
  const { meta, results } = result;
  const o = meta.options;
  const lines = [
    '# Scale-out',
    '',
    `${meta.date.slice(0, 16).replace('T', ' ')} UTC, commit \`${meta.commit}\`${meta.dirty ? ' (dirty)' : ''}, ${meta.machine.cpu}, ${meta.machine.cores} cores, Node ${meta.machine.node}; ${o.rounds} round${o.rounds === 1 ? '' : 's'} (every configuration started and warmed up with ${o.warmupRequests} requests per process first, then measured ${o.windowMs / 1000} s once a round, in a random order), ${o.concurrency} requests in flight over all processes, nothing pinned; ${Math.round(meta.durationS)} s in all.`,
    '',
    ...Object.entries(meta.topologies).map(
      ([name, t]) =>
        `- ${name}: ${/** @type {any} */ (t).where} (${/** @type {any} */ (t).servers} server process${/** @type {any} */ (t).servers === 1 ? '' : 'es'}${/** @type {any} */ (t).throwaway ? ', started for the run' : ''})`,
    ),
    '',
    '| Redis | processes | req/s, all (min–max) | req/s per process | p50 ms | p99 ms | gateway CPU per process | gateway CPU µs/req (min–max) | Redis CPU | mock CPU | client CPU | load avg |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const r of results) {
    const s = r.summary;
    // Round robin gives every process the same share: the slowest paces them all.
    const perProcess = int(s.perProcessRps.median);
    lines.push(
      `| ${r.topology} | ${r.processes} | ${spread(s.totalRps)} | ${perProcess} | ${ms(s.p50.median)} | ${ms(s.p99.median)} | ${s.gatewayCpuPct.map(pct).join(' · ')} | ${spread(s.gatewayCpuUsPerRequest)} | ${pct(s.redisCpuPct)} | ${pct(s.mockCpuPct)} | ${pct(s.loadCpuPct)} | ${s.loadAverage.median.toFixed(1)} |`,
    );
  }
  lines.push(
    '',
    `CPU is a percentage of one core over the window (the machine has ${meta.machine.cores * 100}%): every process's user + system time from \`/proc\`, median of the rounds. Round robin gives each process the same share of requests, so the slowest process paces the others.`,
    `Failed requests in the windows: ${results.reduce((/** @type {number} */ sum, /** @type {any} */ r) => sum + r.summary.failed, 0)}.`,
    '',
    `## Limit and budget under a burst`,
    '',
    `A key limited to ${o.limit} requests per minute gets ${o.limitBurst} requests at once; a key with a lifetime budget of ${o.budgetRequests} requests' cost gets ${o.budgetBurst}; both spread over the processes in turn, ${o.concurrency} in flight. A budget is checked before a request and counted after it, so the requests admitted before the spend of those ahead reached Redis overshoot it: the check is that each admitted request saw budget left (its \`x-infergate-budget-remaining-usd\`), and that the spend is exactly the admitted requests' cost.`,
    '',
    '| Redis | processes | limit: 200s / limit | 200s per process | upstream calls | budget: admitted / its worth | spent / budget ($) | spend = admitted × cost | least left at an admission ($) | verdict |',
    '|---|---|---|---|---|---|---|---|---|---|',
  );
  for (const r of results) {
    const { limit: l, budget: b } = r;
    const verdict = l.exact && b.withinRule ? 'exact' : l.over ? '**OVER THE LIMIT**' : '**FAILED**';
    lines.push(
      `| ${r.topology} | ${r.processes} | ${l.ok} / ${l.limit} | ${l.okPerProcess.join(' · ')} | ${l.upstream} | ${b.ok} / ${b.budgetRequests} | ${b.spentUsd.toFixed(6)} / ${b.budgetUsd.toFixed(6)} | ${b.spendExact ? 'exact' : '**no**'} | ${b.leastRemainingUsd.toFixed(6)} | ${verdict} |`,
    );
  }
  lines.push('', '## Reroute', '');
  const reroutes = result.reroutes ?? [];
  if (result.busSkipped) lines.push(`With the health bus: not run, ${result.busSkipped}.`, '');
  if (reroutes.length > 0) {
    lines.push(
      `The model has two deployments, \`flaky\` and \`steady\`; ${o.rerouteConcurrency} requests in flight spread over the processes. After ${o.rerouteBeforeMs / 1000} s, \`flaky\` fails process 0's calls only (500s, retried on \`steady\`), for ${o.rerouteAfterMs / 1000} s; each check with the bus ${o.rerouteRepeats} times, with fresh processes. Times from the first failure, on the flaky upstream's clock; process 0's breaker opens once ${FAILURES_TO_OPEN} of its calls in a row have failed (calls it had already started may still arrive after).`,
      '',
      "| Redis | processes | health bus | calls to flaky before, per process | process 0's breaker opens | its last call (failures) | others' last call | after the opening | others' calls after the first failure | client errors |",
      '|---|---|---|---|---|---|---|---|---|---|',
    );
    for (const r of reroutes) {
      const others =
        r.othersCallsAfter === 0
          ? 'none after it (not measured)'
          : r.rerouted
            ? `${ms(r.rerouteMs)} ms`
            : `**still calling** at ${ms(r.windowAfterMs / 1000)} s`;
      lines.push(
        `| ${r.topology} | ${r.processes} | ${r.bus ? 'yes' : 'no (control)'} | ${r.callsBefore.join(' · ')} | ${ms(r.openingMs)} ms | ${ms(r.failingStopMs)} ms (${r.failedCalls}) | ${others} | ${r.rerouted ? `${ms(r.afterOpenMs)} ms` : '–'} | ${r.othersCallsAfter} | ${r.clientErrors} |`,
      );
    }
  }
  return `${lines.join('\n')}\n`;
}
