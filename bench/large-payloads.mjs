#!/usr/bin/env node
// Event-loop stall of the gateway while large payloads pass (issues 7 and 14): a 20 MB base64
// image inline in a request on each cell — chat passthrough, chat → Anthropic, Anthropic (Messages)
// client → chat, Responses client → chat, chat → Responses — and a 50 MB image edit upload, each
// sent while another stream is relayed (a chunk every 10 ms). The hostile-schema cases (issue 22)
// send small tool schemas whose $refs expand exponentially (code-review findings 1 and 2) to a
// Gemini upstream and to the local model: cut at their cycle (200), or refused once past the
// schema work budget (400), either way within the stall target. Prints, per case and round, the
// gateway's event-loop delay (max, p99; 1 ms histogram) and the worst gap between chunks of the
// other stream, then the median and worst over the rounds.
//
//   npm run build && node bench/large-payloads.mjs [--rounds N] [--cases pass,translated,messages-to-chat,...]
//   node --import tsx bench/large-payloads.mjs --src [--root DIR]   (the TypeScript sources, no build)
//
// Only the gateway (and the ticker upstream it relays) runs in this process: the upstream fakes
// and the client of the big requests run in test/hardening/payload-peer.ts, a process of its own
// (started with tsx), so building, sending and parsing 20 MB elsewhere never counts here.
// INFERGATE_DIST=<folder> measures another build of dist/ (A/B runs), as bench/run.mjs does.
import { fork } from 'node:child_process';
import { createServer } from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const argv = process.argv.slice(2);
const value = (/** @type {string} */ name, /** @type {string} */ fallback) => {
  const i = argv.indexOf(name);
  return i >= 0 && argv[i + 1] !== undefined ? /** @type {string} */ (argv[i + 1]) : fallback;
};
const root = resolve(value('--root', fileURLToPath(new URL('..', import.meta.url))));
const rounds = Number(value('--rounds', '5'));
const SCHEMA_CASES = 'schema-gemini-cycle,schema-gemini-chain,schema-gemini-tools,schema-local-cycle,schema-local-chain';
const wanted = value('--cases', `pass,translated,messages-to-chat,responses-to-chat,chat-to-responses,edit,${SCHEMA_CASES}`).split(',');
const entry = argv.includes('--src')
  ? pathToFileURL(resolve(root, 'src/index.ts')).href
  : process.env.INFERGATE_DIST
    ? pathToFileURL(resolve(process.env.INFERGATE_DIST, 'index.js')).href
    : pathToFileURL(resolve(root, 'dist/index.js')).href;
/** @type {typeof import('infergate')} */
const { createAnthropicProvider, createGateway, createGeminiProvider, createLocalProvider, createOpenAIProvider } = await import(entry);

const TICK_MS = 10;

// ---- the peer: upstream fakes and the big requests' client, in its own process -----------------
const peer = fork(resolve(root, 'test/hardening/payload-peer.ts'), [], {
  execArgv: ['--import', 'tsx'],
  cwd: root,
  stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
});
/** @type {{ chatURL: string, anthropicURL: string, responsesURL: string, mediaBaseURL: string, geminiURL: string }} */
const urls = await new Promise((done) => peer.once('message', (/** @type {any} */ message) => done(message)));
let nextId = 1;
/** @param {Record<string, unknown>} command @returns {Promise<any>} */
function ask(command) {
  const id = nextId++;
  return new Promise((done, fail) => {
    const onMessage = (/** @type {any} */ message) => {
      if (message.id !== id) return;
      peer.off('message', onMessage);
      if (message.error) fail(new Error(message.error));
      else done(message);
    };
    peer.on('message', onMessage);
    peer.send({ ...command, id });
  });
}

// ---- the ticker upstream: one chat chunk every 10 ms until stopped -----------------------------
/** @type {{ response: import('node:http').ServerResponse, timer: NodeJS.Timeout, ticks: number } | undefined} */
let ticking;
const chunk = (/** @type {unknown} */ delta, /** @type {string | null} */ finish) =>
  `data: ${JSON.stringify({ id: 'chatcmpl-ticker', object: 'chat.completion.chunk', created: 1_700_000_000, model: 'ticker-1', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const ticker = createServer((request, response) => {
  request.resume();
  request.on('end', () => {
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    response.write(chunk({ role: 'assistant', content: '' }, null));
    const stream = { response, ticks: 0, timer: setInterval(() => response.write(chunk({ content: `tick ${++stream.ticks} ` }, null)), TICK_MS) };
    ticking = stream;
  });
});
await new Promise((done) => ticker.listen(0, '127.0.0.1', () => done(undefined)));
const tickerURL = `http://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (ticker.address()).port}`;

// ---- the gateway -----------------------------------------------------------------------------
const gateway = createGateway({
  keys: [{ key: 'sk-test' }],
  providers: {
    'oai-chat': createOpenAIProvider({ baseURL: `${urls.chatURL}/v1`, apiKey: 'up-key', responses: false }),
    claude: createAnthropicProvider({ baseURL: urls.anthropicURL, apiKey: 'up-key' }),
    'oai-responses': createOpenAIProvider({ baseURL: `${urls.responsesURL}/v1`, apiKey: 'up-key', chat: false, responses: true }),
    'oai-media': createOpenAIProvider({ baseURL: urls.mediaBaseURL, apiKey: 'sk-upstream-openai' }),
    ticker: createOpenAIProvider({ baseURL: `${tickerURL}/v1`, apiKey: 'up-key', responses: false }),
    gemini: createGeminiProvider({ baseURL: urls.geminiURL, apiKey: 'up-key' }),
    local: createLocalProvider({ chunkDelayMs: 0 }),
  },
  models: [
    { id: 'gpt-chat', provider: 'oai-chat', upstreamModel: 'gpt-4.1' },
    { id: 'claude', provider: 'claude', upstreamModel: 'claude-sonnet-4-5' },
    { id: 'gpt-responses', provider: 'oai-responses', upstreamModel: 'gpt-4.1' },
    { id: 'oai-image', provider: 'oai-media', kind: 'image', upstreamModel: 'gpt-image-1.5' },
    { id: 'ticker', provider: 'ticker', upstreamModel: 'ticker-1' },
    { id: 'gemini', provider: 'gemini', upstreamModel: 'gemini-2.5-flash' },
    { id: 'local-chat', provider: 'local' },
  ],
  limits: { uploadFileBytes: 64 * 1024 * 1024 },
  logger: false,
});
const server = createServer(gateway);
await new Promise((done) => server.listen(0, '127.0.0.1', () => done(undefined)));
const url = `http://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (server.address()).port}`;

const IMAGE_BYTES = 15 * 2 ** 20; // 20 MiB once base64
/** @param {string} client @param {string} model @param {string} upstream */
const image = (client, model, upstream) => ({ kind: 'image', url, client, model, upstream, imageBytes: IMAGE_BYTES });
const cases = {
  pass: { label: '20 MB image, chat → chat (passthrough)', command: image('chat', 'gpt-chat', 'chat') },
  translated: { label: '20 MB image, chat → anthropic (translated)', command: image('chat', 'claude', 'anthropic') },
  'messages-to-chat': { label: '20 MB image, messages → chat (translated)', command: image('messages', 'gpt-chat', 'chat') },
  'responses-to-chat': { label: '20 MB image, responses → chat (translated)', command: image('responses', 'gpt-chat', 'chat') },
  'chat-to-responses': { label: '20 MB image, chat → responses (translated)', command: image('chat', 'gpt-responses', 'responses') },
  edit: { label: '50 MB edit upload → openai (multipart)', command: { kind: 'edit-upload', url, model: 'oai-image', fileBytes: 50 * 2 ** 20 } },
  'schema-gemini-cycle': { label: '369 B self-referencing schema, chat → gemini', command: schema('gemini', 'self-reference-3', 1, 200) },
  'schema-gemini-chain': { label: 'chain of $defs (3^11), chat → gemini', command: schema('gemini', 'chain-12x3', 1, 400) },
  'schema-gemini-tools': { label: '100 tools × chain of $defs (3^7), chat → gemini', command: schema('gemini', 'chain-8x3', 100, 400) },
  'schema-local-cycle': { label: '535 B self-referencing schema, chat → local', command: schema('local-chat', 'self-reference-6', 1, 200) },
  'schema-local-chain': { label: 'chain of $defs (20^5), chat → local', command: schema('local-chat', 'chain-5x20', 1, 400) },
};

/**
 * A chat request whose tools carry a hostile schema (`test/hardening/payload-peer.ts`), and the status it must get.
 * @param {string} model @param {string} name @param {number} tools @param {number} status
 */
function schema(model, name, tools, status) {
  return { kind: 'schema', url, model, schema: name, tools, expectStatus: status };
}

/** Whether the peer's answer is the one the case expects. @param {Record<string, unknown>} command @param {any} result */
function answeredAsExpected(command, result) {
  if (command.kind === 'schema') return result.status === command.expectStatus;
  return result.status === 200 && result.receivedHash === result.sentHash;
}

/** One big request during a ticker stream. @param {Record<string, unknown>} command */
async function measure(command) {
  const response = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: 'Bearer sk-test', 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'ticker', messages: [{ role: 'user', content: 'tick' }], stream: true }),
  });
  const reader = /** @type {ReadableStreamDefaultReader<Uint8Array>} */ (response.body?.getReader());
  await reader.read();
  /** @type {number[]} */
  const arrivals = [];
  const drained = (async () => {
    for (;;) {
      const { done } = await reader.read();
      if (done) return;
      arrivals.push(performance.now());
    }
  })();
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  const result = await ask(command);
  const cpu = process.cpuUsage(cpuBefore);
  histogram.disable();
  const ended = performance.now();
  const stream = /** @type {NonNullable<typeof ticking>} */ (ticking);
  clearInterval(stream.timer);
  stream.response.end(chunk({}, 'stop') + 'data: [DONE]\n\n');
  await drained;
  let gap = 0;
  let previous = started;
  for (const at of arrivals) {
    if (at < started) continue;
    gap = Math.max(gap, at - previous);
    previous = at;
    if (at > ended) break;
  }
  if (!answeredAsExpected(command, result))
    throw new Error(`${command.kind}: HTTP ${result.status}, upstream got the bytes intact: ${result.receivedHash === result.sentHash}; ${result.answer}`);
  // The CPU this process spent meanwhile bounds the longest stall the request can cause on an idle
  // machine; on a busy one the delay also holds the time other processes took the core.
  return { maxMs: histogram.max / 1e6, p99Ms: histogram.percentile(99) / 1e6, gapMs: gap, latencyMs: result.latencyMs, cpuMs: (cpu.user + cpu.system) / 1000 };
}

const fmt = (/** @type {number} */ n) => n.toFixed(1).padStart(6);
const median = (/** @type {number[]} */ values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;
console.log(`gateway: ${entry}; ${rounds} rounds; Node ${process.version}`);
for (const [name, { label, command }] of Object.entries(cases)) {
  if (!wanted.includes(name)) continue;
  /** @type {Awaited<ReturnType<typeof measure>>[]} */
  const runs = [];
  for (let round = 0; round < rounds; round++) {
    const run = await measure(command);
    runs.push(run);
    console.log(
      `  ${label} #${round + 1}: event loop max ${fmt(run.maxMs)} ms, p99 ${fmt(run.p99Ms)} ms; other stream worst gap ${fmt(run.gapMs)} ms; latency ${run.latencyMs.toFixed(0)} ms; gateway CPU ${fmt(run.cpuMs)} ms`,
    );
  }
  const pick = (/** @type {'maxMs' | 'p99Ms' | 'gapMs' | 'cpuMs'} */ key) => runs.map((run) => run[key]);
  console.log(
    `${label}: event loop max median ${fmt(median(pick('maxMs')))} (worst ${fmt(Math.max(...pick('maxMs')))}) ms, p99 median ${fmt(median(pick('p99Ms')))} ms; stream gap median ${fmt(median(pick('gapMs')))} (worst ${fmt(Math.max(...pick('gapMs')))}) ms; gateway CPU median ${fmt(median(pick('cpuMs')))} ms`,
  );
}

server.closeAllConnections();
server.close();
ticker.closeAllConnections();
ticker.close();
await Promise.all(Object.values(gateway.options.providers).map((provider) => provider.close?.()));
peer.send({ kind: 'close', id: 0 });
