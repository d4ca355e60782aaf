#!/usr/bin/env node
// Profiles the gateway on one workload: starts the mock and the built gateway (with --cpu-prof,
// pinned like in the benchmark), drives one cell for a while, stops, and prints where the time went.
// Usage: node bench/profile.mjs <cell> <json|paced|burst> [seconds=10] [--floor] [--metrics]
//   e.g. node bench/profile.mjs messages-to-chat burst 10
// --floor profiles the floor proxy instead (same workload on the cell's upstream protocol).
// --no-prof measures CPU per unit of work only, without the profiler's overhead.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GATEWAY_CORE, LOAD_CORE, pinSelf, startChild } from './lib/children.mjs';
import { closedLoop, streamLoop } from './lib/load.mjs';
import { cells, target } from './lib/payloads.mjs';
import { cpuMicros } from './lib/proc.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const [cell = 'chat-pass', mode = 'json', secondsArg = '10'] = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const useFloor = process.argv.includes('--floor');
const profiling = !process.argv.includes('--no-prof');
if (!cells[cell] || !['json', 'paced', 'burst'].includes(mode)) {
  console.error(`usage: node bench/profile.mjs <${Object.keys(cells).join('|')}> <json|paced|burst> [seconds] [--floor]`);
  process.exit(1);
}
const seconds = Math.min(120, Number(secondsArg));
pinSelf();
const profileDir = mkdtempSync(join(os.tmpdir(), 'infergate-prof-'));

const mock = await startChild('mock', join(here, 'mock-upstream.mjs'), [], LOAD_CORE);
const origin = `http://127.0.0.1:${mock.port}`;
const arm = useFloor ? 'floor' : 'infergate';
// --metrics: the gateway with metrics on (gateway-server.mjs --metrics).
const serverArgs = process.argv.includes('--metrics') && !useFloor ? [origin, '--metrics'] : [origin];
const server = await startChild(arm, join(here, useFloor ? 'floor-proxy.mjs' : 'gateway-server.mjs'), serverArgs, GATEWAY_CORE, {
  nodeArgs: profiling ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [],
});
const t = target({ arm, cell, stream: mode !== 'json', port: server.port, mockOrigin: origin });
const check = { terminal: t.terminal };
await mock.ipc('config', mode === 'burst' ? { chunks: 200, intervalMs: 0, ttfbMs: 0 } : { chunks: 20, intervalMs: 20, ttfbMs: 0 });

// Warm-up (JIT, pools), not counted.
if (mode === 'json') await closedLoop({ port: server.port, request: t.request, concurrency: 16, durationMs: 2000 });
else await streamLoop({ port: server.port, request: t.request, concurrency: 16, durationMs: 2000, check, keepGaps: false });
const cpuBefore = cpuMicros(server.pid);
const durationMs = seconds * 1000;
let work = 0;
let unit = 'requests';
if (mode === 'json') {
  const r = await closedLoop({ port: server.port, request: t.request, concurrency: 64, durationMs });
  work = r.requests;
} else if (mode === 'burst') {
  const r = await streamLoop({ port: server.port, request: t.request, concurrency: 16, durationMs, check, keepGaps: false });
  work = r.streams * 200;
  unit = 'upstream chunks';
} else {
  const r = await streamLoop({ port: server.port, request: t.request, concurrency: 200, durationMs, check, keepGaps: false });
  work = r.streams * 20;
  unit = 'upstream chunks';
}
const cpu = cpuMicros(server.pid) - cpuBefore;
console.log(`${arm} ${cell} ${mode}: ${work} ${unit} in ${seconds} s, ${(cpu / work).toFixed(2)} µs CPU per ${unit.replace(/s$/, '')}`);
await server.ipc('shutdown').catch(() => undefined);
await mock.ipc('shutdown').catch(() => undefined);
await new Promise((r) => setTimeout(r, profiling ? 1500 : 200));
if (!profiling) process.exit(0);
const file = readdirSync(profileDir).find((f) => f.endsWith('.cpuprofile'));
if (!file) {
  console.error('no profile written');
  process.exit(1);
}
execFileSync(process.execPath, [join(here, 'profile-summary.mjs'), join(profileDir, file), '25'], { stdio: 'inherit' });
console.log(`profile: ${join(profileDir, file)}`);
