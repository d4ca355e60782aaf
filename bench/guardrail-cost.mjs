// What an output guardrail costs per stream chunk, as a paired measure (bench/lib/paired-cost.mjs):
// one process holds a gateway per arm, all passing Chat streams through to the mock upstream (its
// own process, on the other core) over HTTP, in interleaved rounds. Arms: no guardrail (the answer
// piped byte for byte), and each guardrail on the answer with `mask`: `regex` (one pattern,
// nothing found), `regex-hit` (a pattern matching one word in eight, so masking runs), `secrets`
// and `pii` (nothing found). The mock paces its chunks (`--interval`, default 1 ms), so each
// upstream chunk is a read of its own and the window does its work per chunk, as with a model.
// Prints the CPU µs per stream and per upstream chunk of each arm (median of the rounds) and the
// difference with no guardrail; then, one stream alone with chunks 10 ms apart, the time to the
// first text the client gets, which the windows' hold-back delays.
// Usage: node bench/guardrail-cost.mjs [--streams N] [--rounds N] [--concurrency N] [--chunks N] [--interval MS]
//   (after `npm run build`)
// Through a variable, as gateway-server.mjs does: dist/ is built by `npm run build`, types come from src/.
const dist = '../dist/';
/** @type {typeof import('infergate')} */
const { createGateway, createOpenAIProvider } = await import(`${dist}index.js`);
import { stopAll } from './lib/children.mjs';
import { cpuPerRequest, median, numberOption, pairedMedians, startPairedMock } from './lib/paired-cost.mjs';

const streams = numberOption('--streams', 400);
const rounds = numberOption('--rounds', 7);
const concurrency = numberOption('--concurrency', 32);
const chunks = numberOption('--chunks', 200);
const intervalMs = numberOption('--interval', 1);

const mock = await startPairedMock({ chunks, intervalMs, ttfbMs: 0 });

const output = /** @type {const} */ ({ phase: 'output', action: 'mask' });
/** Each arm's guardrails (none for `off`). @type {Record<string, import('infergate').GuardrailConfig[]>} */
const guardrails = {
  off: [],
  regex: [{ type: 'regex', name: 'tickets', ...output, patterns: [{ category: 'ticket', pattern: String.raw`\bTCK-\d{6}\b` }] }],
  // The mock's words cycle through eight; `golf` is one of them.
  'regex-hit': [{ type: 'regex', name: 'golf', ...output, patterns: [{ category: 'word', pattern: String.raw`\bgolf\b` }] }],
  secrets: [{ type: 'secrets', ...output }],
  pii: [{ type: 'pii', ...output }],
};
const gateways = Object.fromEntries(
  Object.entries(guardrails).map(([arm, list]) => [
    arm,
    createGateway({
      keys: [{ key: 'sk-bench', id: 'bench' }],
      providers: { oai: createOpenAIProvider({ baseURL: `http://127.0.0.1:${mock.port}/v1`, apiKey: 'sk-mock', responses: false }) },
      models: [{ id: 'bench-chat', provider: 'oai', upstreamModel: 'mock-model' }],
      logger: false,
      ...(list.length > 0 ? { policies: { guardrails: list } } : {}),
    }),
  ]),
);

// Each arm's answer must be complete (and masked where it should be) before it is measured.
const body = JSON.stringify({ model: 'bench-chat', stream: true, messages: [{ role: 'user', content: 'Say something.' }] });
const init = { method: 'POST', headers: { authorization: 'Bearer sk-bench', 'content-type': 'application/json' }, body };
for (const [arm, gateway] of Object.entries(gateways)) {
  const text = await (await gateway.fetch('http://bench/v1/chat/completions', init)).text();
  if (!text.includes('data: [DONE]')) throw new Error(`${arm}: the stream did not complete: ${text.slice(-300)}`);
  if ((arm === 'regex-hit') !== text.includes('[REDACTED:word]')) throw new Error(`${arm}: masking is not as expected`);
}

const load = { model: 'bench-chat', stream: true, requests: streams, concurrency };
const cpu = await pairedMedians(Object.fromEntries(Object.entries(gateways).map(([arm, gateway]) => [arm, () => cpuPerRequest(gateway, load)])), rounds);
const off = cpu.off ?? Number.NaN;
console.log(
  `Streams of ${chunks} chunks ${intervalMs} ms apart, ${concurrency} at a time: CPU µs (gateway and load in one process), median of ${rounds} rounds:`,
);
for (const [arm, value] of Object.entries(cpu)) {
  const difference = arm === 'off' ? '' : `: +${((value - off) / chunks).toFixed(2)} µs per chunk (${(((value - off) / off) * 100).toFixed(1)}%)`;
  console.log(`  ${arm.padEnd(10)} ${value.toFixed(0).padStart(7)} per stream, ${(value / chunks).toFixed(2)} per chunk${difference}`);
}

// Time from the request to the first chunk that carries text, one stream alone, its chunks 10 ms apart.
const paced = { chunks: 100, intervalMs: 10 };
await mock.ipc('config', { ...paced, ttfbMs: 0 });
console.log(`Time to the first text, one stream of ${paced.chunks} chunks ${paced.intervalMs} ms apart (median of 5), and the text chunks the client got:`);
for (const [arm, gateway] of Object.entries(gateways)) {
  const times = [];
  let textChunks = 0;
  for (let i = 0; i < 5; i++) {
    const started = performance.now();
    const response = await gateway.fetch('http://bench/v1/chat/completions', init);
    const reader = /** @type {ReadableStream<Uint8Array>} */ (response.body).getReader();
    const decoder = new TextDecoder();
    let seen = '';
    let first = Number.NaN;
    for (let read = await reader.read(); !read.done; read = await reader.read()) {
      seen += decoder.decode(read.value, { stream: true });
      if (Number.isNaN(first) && /"content":"[^"]/.test(seen)) first = performance.now() - started;
    }
    times.push(first);
    textChunks = (seen.match(/"content":"[^"]/g) ?? []).length;
  }
  console.log(`  ${arm.padEnd(10)} ${median(times).toFixed(0).padStart(5)} ms, ${textChunks} text chunks`);
}
stopAll();
