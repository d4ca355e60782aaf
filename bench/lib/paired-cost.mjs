// The paired measure of bench/metrics-cost.mjs and bench/guardrail-cost.mjs: gateways in this one
// process (pinned to the gateway core), loaded in turn with the same requests through their fetch
// handlers, in interleaved rounds, so that the machine's load falls on every arm alike. The load
// is generated in the same process: each arm carries it, the differences are the arms' own.
import { execFileSync } from 'node:child_process';
import { GATEWAY_CORE, LOAD_CORE, pinned, startChild } from './children.mjs';

/** A numeric command-line option (`--name N`), else `fallback`. @param {string} name @param {number} fallback */
export function numberOption(name, fallback) {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

/**
 * Pins this process (the gateways and their load) to the gateway core and starts the mock
 * upstream on the other, with `knobs` (chunks, intervalMs, ttfbMs).
 * @param {Record<string, number>} knobs
 */
export async function startPairedMock(knobs) {
  if (pinned) execFileSync('taskset', ['-cp', String(GATEWAY_CORE), String(process.pid)], { stdio: 'ignore' });
  const mock = await startChild('mock', new URL('../mock-upstream.mjs', import.meta.url).pathname, [], LOAD_CORE);
  await mock.ipc('config', knobs);
  return mock;
}

/** The median of some values (NaN for none). @param {number[]} values */
export const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;

/**
 * CPU µs of this process per request: `requests` Chat requests through `gateway`, `concurrency`
 * at a time, each answer read whole.
 * @param {import('infergate').Gateway} gateway
 * @param {{ model: string, stream: boolean, requests: number, concurrency: number, prompt?: string }} load
 */
export async function cpuPerRequest(gateway, { model, stream, requests, concurrency, prompt = 'Say something.' }) {
  const body = JSON.stringify({ model, stream, messages: [{ role: 'user', content: prompt }] });
  const init = { method: 'POST', headers: { authorization: 'Bearer sk-bench', 'content-type': 'application/json' }, body };
  let left = requests;
  const started = process.cpuUsage();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (left-- > 0) await (await gateway.fetch('http://bench/v1/chat/completions', init)).arrayBuffer();
    }),
  );
  const cpu = process.cpuUsage(started);
  return (cpu.user + cpu.system) / requests;
}

/**
 * Each arm measured once for warm-up (JIT, connection pools; not counted), then `rounds` times,
 * in a rotated order each round: the median of each arm's rounds.
 * @template {string} Arm
 * @param {Record<Arm, () => Promise<number>>} arms
 * @param {number} rounds
 * @returns {Promise<Record<Arm, number>>}
 */
export async function pairedMedians(arms, rounds) {
  const names = /** @type {Arm[]} */ (Object.keys(arms));
  for (const name of names) await arms[name]();
  /** @type {Record<string, number[]>} */
  const samples = Object.fromEntries(names.map((name) => [name, []]));
  for (let round = 0; round < rounds; round++) {
    const order = [...names.slice(round % names.length), ...names.slice(0, round % names.length)];
    for (const name of order) samples[name]?.push(await arms[name]());
  }
  return /** @type {Record<Arm, number>} */ (Object.fromEntries(names.map((name) => [name, median(samples[name] ?? [])])));
}
