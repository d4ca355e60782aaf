// What the MCP gateway adds to a tool call: the SDK's client calls an SDK-built upstream's `echo`
// tool directly (the floor) and through the gateway's /mcp, in one run. The upstream and the
// gateway are processes of their own (the gateway pinned to its core when there are two); each
// arm opens one session, then makes `--calls` calls, `--concurrency` at a time, over `--rounds`
// interleaved rounds. Prints calls per second, latency percentiles and the gateway process's CPU
// per call (from /proc) for the gateway arm.
// Usage: node bench/mcp-overhead.mjs [--calls N] [--concurrency N] [--rounds N]   (after `npm run build`)
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { GATEWAY_CORE, LOAD_CORE, pinSelf, startChild, stopAll } from './lib/children.mjs';
import { numberOption } from './lib/paired-cost.mjs';
import { cpuMicros } from './lib/proc.mjs';
import { summarize } from './lib/stats.mjs';

const calls = numberOption('--calls', 2000);
const concurrency = numberOption('--concurrency', 8);
const rounds = numberOption('--rounds', 3);

pinSelf();
const upstream = await startChild('mcp upstream', 'bench/mcp-upstream.mjs', [], LOAD_CORE);
const gateway = await startChild('gateway', 'bench/mcp-gateway.mjs', [`http://127.0.0.1:${upstream.port}`], GATEWAY_CORE);

/** One client session to `url`. @param {string} url @param {Record<string, string>} headers */
async function session(url, headers) {
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  return client;
}

const arms = {
  direct: { client: await session(`http://127.0.0.1:${upstream.port}/mcp`, {}), tool: 'echo' },
  gateway: { client: await session(`http://127.0.0.1:${gateway.port}/mcp`, { authorization: 'Bearer sk-bench' }), tool: 'up__echo' },
};

/** `calls` calls, `concurrency` at a time: their latencies (ms) and the wall time. @param {keyof typeof arms} arm */
async function run(arm) {
  const { client, tool } = arms[arm];
  /** @type {number[]} */
  const latencies = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < calls) {
        next++;
        const sent = performance.now();
        const result = await client.callTool({ name: tool, arguments: { text: 'ping' } });
        if (/** @type {any} */ (result).content?.[0]?.text !== 'ping') throw new Error(`${arm}: unexpected result ${JSON.stringify(result)}`);
        latencies.push(performance.now() - sent);
      }
    }),
  );
  return { latencies, wallMs: performance.now() - started };
}

// Warm both paths up (JIT, pooled connections) before measuring.
for (const arm of /** @type {const} */ (['direct', 'gateway'])) {
  const { client, tool } = arms[arm];
  for (let i = 0; i < 200; i++) await client.callTool({ name: tool, arguments: { text: 'ping' } });
}

/** @type {Record<'direct' | 'gateway', { rates: number[], latencies: number[], cpu: number[] }>} */
const results = { direct: { rates: [], latencies: [], cpu: [] }, gateway: { rates: [], latencies: [], cpu: [] } };
for (let round = 0; round < rounds; round++) {
  for (const arm of /** @type {const} */ (['direct', 'gateway'])) {
    const cpuBefore = cpuMicros(gateway.pid);
    const { latencies, wallMs } = await run(arm);
    const cpu = cpuMicros(gateway.pid) - cpuBefore;
    results[arm].rates.push((calls * 1000) / wallMs);
    results[arm].latencies.push(...latencies);
    results[arm].cpu.push(cpu / calls);
  }
}

const median = (/** @type {number[]} */ values) => /** @type {number} */ ([...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]);
console.log(`MCP tool calls: ${calls} per round × ${rounds} rounds, ${concurrency} at a time`);
console.log('arm       calls/s   p50 ms   p90 ms   p99 ms   gateway CPU µs/call');
for (const [arm, { rates, latencies, cpu }] of Object.entries(results)) {
  const { p50, p90, p99 } = summarize(latencies);
  const cpuText = arm === 'gateway' ? median(cpu).toFixed(0) : '-';
  console.log(
    `${arm.padEnd(9)} ${median(rates).toFixed(0).padStart(7)} ${p50.toFixed(2).padStart(8)} ${p90.toFixed(2).padStart(8)} ${p99.toFixed(2).padStart(8)}   ${cpuText}`,
  );
}
await Promise.all(Object.values(arms).map(({ client }) => client.close()));
stopAll();
process.exit(0);
