#!/usr/bin/env node
// Summarizes a V8 CPU profile (`--cpu-prof`, e.g. from `npm run bench -- --profile`): the functions
// with the most self time, and self time grouped by package / source file.
// Usage: node bench/profile-summary.mjs <file.cpuprofile> [top=30]
import { readFileSync } from 'node:fs';

const file = process.argv[2];
const top = Number(process.argv[3] ?? 30);
if (!file) {
  console.error('usage: node bench/profile-summary.mjs <file.cpuprofile> [top]');
  process.exit(1);
}

/** @type {{ nodes: { id: number, callFrame: { functionName: string, url: string, lineNumber: number }, hitCount?: number }[], samples: number[], timeDeltas: number[], startTime: number, endTime: number }} */
const profile = JSON.parse(readFileSync(file, 'utf8'));
/** @type {Map<number, number>} */
const selfMicros = new Map();
for (let i = 0; i < profile.samples.length; i++) {
  const id = /** @type {number} */ (profile.samples[i]);
  selfMicros.set(id, (selfMicros.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
}
const total = [...selfMicros.values()].reduce((a, b) => a + b, 0);

/** @param {string} url */
function where(url) {
  if (!url) return '(native / V8)';
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 'node_modules/'.length).split('/');
    return rest[0]?.startsWith('@') ? `${rest[0]}/${rest[1]}` : (rest[0] ?? url);
  }
  if (url.startsWith('node:')) return url;
  const dist = url.indexOf('/dist/');
  if (dist >= 0) return `infergate ${url.slice(dist + 1)}`;
  return url.replace(/^file:\/\//, '');
}

/** @type {Map<string, number>} */
const byFunction = new Map();
/** @type {Map<string, number>} */
const byPlace = new Map();
for (const node of profile.nodes) {
  const micros = selfMicros.get(node.id) ?? 0;
  if (!micros) continue;
  const { functionName, url, lineNumber } = node.callFrame;
  const place = where(url);
  const fn = `${functionName || '(anonymous)'}  ${place}${url ? `:${lineNumber + 1}` : ''}`;
  byFunction.set(fn, (byFunction.get(fn) ?? 0) + micros);
  byPlace.set(place, (byPlace.get(place) ?? 0) + micros);
}

// Inclusive time: a node's self time plus its descendants', summed per function (a function that
// appears several times on one stack is counted once per stack).
/** @type {Map<number, (typeof profile.nodes)[number] & { children?: number[] }>} */
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
/** @type {Map<string, number>} */
const inclusive = new Map();
/** @param {number} id @param {Set<string>} onStack @returns {number} */
function walk(id, onStack) {
  const node = /** @type {any} */ (byId.get(id));
  const { functionName, url, lineNumber } = node.callFrame;
  const name = `${functionName || '(anonymous)'}  ${where(url)}${url ? `:${lineNumber + 1}` : ''}`;
  const fresh = !onStack.has(name);
  if (fresh) onStack.add(name);
  let sum = selfMicros.get(id) ?? 0;
  for (const child of node.children ?? []) sum += walk(child, onStack);
  if (fresh) {
    onStack.delete(name);
    inclusive.set(name, (inclusive.get(name) ?? 0) + sum);
  }
  return sum;
}
const rootNode = profile.nodes[0];
if (rootNode) walk(rootNode.id, new Set());

const pct = (/** @type {number} */ v) => `${((100 * v) / total).toFixed(1).padStart(5)}%`;
console.log(`${file}: ${(total / 1000).toFixed(0)} ms sampled over ${((profile.endTime - profile.startTime) / 1e6).toFixed(1)} s`);
console.log('\nself time by function:');
for (const [name, v] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${pct(v)}  ${name}`);
console.log('\nself time by package / file:');
for (const [name, v] of [...byPlace].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${pct(v)}  ${name}`);
console.log('\ninclusive time, functions of infergate and its web-stream/fetch layers:');
for (const [name, v] of [...inclusive]
  .filter(([name]) => /infergate |@whatwg-node|webstreams|undici|eventsource/.test(name))
  .sort((a, b) => b[1] - a[1])
  .slice(0, top))
  console.log(`${pct(v)}  ${name}`);
