// The mock upstream: a node:http server speaking OpenAI Chat Completions, OpenAI Responses and
// Anthropic Messages, as JSON and SSE, from pre-serialized bytes with a content-length (so neither
// side pays for chunked encoding) and no Nagle delay; and, for the soak, OpenAI's media endpoints
// (`lib/mock-media.mjs`) and injected faults (`lib/mock-faults.mjs`: a request whose body holds
// `FAULT:429`, `FAULT:500` or `FAULT:cut` gets that fault). Knobs, set by the runner over IPC:
//   chunks     — content deltas per stream
//   intervalMs — time between deltas (0 = burst: everything written at once)
//   ttfbMs     — time before the headers and the first delta (and before a JSON answer)
//   words      — words in a JSON answer
// The request body is never parsed: `"stream":true` and the fault markers are looked for in the
// bytes, and big bodies (images, uploads) are drained as they come.
import http from 'node:http';
import { announce, serveIpc } from './lib/ipc.mjs';
import { answerErrorStatus, BodyScanner, cutHalfway, faultNeedles } from './lib/mock-faults.mjs';
import { mediaAnswer } from './lib/mock-media.mjs';
import { jsonBody, streamBody } from './lib/wire.mjs';

/** @typedef {'chat' | 'messages' | 'responses'} Protocol */

const config = { chunks: 20, intervalMs: 20, ttfbMs: 0, words: 40 };
const stats = { requests: 0, streams: 0, json: 0, media: 0, bytesIn: 0, aborted: 0, open: 0, faults: { 429: 0, 500: 0, cut: 0 } };

/** @type {Map<string, Buffer>} */
const jsonCache = new Map();
/** @type {Map<string, ReturnType<typeof streamBody>>} */
const streamCache = new Map();

/** @param {Protocol} protocol */
function jsonFor(protocol) {
  const key = `${protocol}:${config.words}`;
  let body = jsonCache.get(key);
  if (!body) jsonCache.set(key, (body = jsonBody(protocol, config.words)));
  return body;
}

/** @param {Protocol} protocol */
function streamFor(protocol) {
  const key = `${protocol}:${config.chunks}`;
  let body = streamCache.get(key);
  if (!body) streamCache.set(key, (body = streamBody(protocol, config.chunks)));
  return body;
}

/** @param {string} path @returns {Protocol | undefined} */
function protocolOf(path) {
  if (path.endsWith('/chat/completions')) return 'chat';
  if (path.endsWith('/messages')) return 'messages';
  if (path.endsWith('/responses')) return 'responses';
  return undefined;
}

const server = http.createServer({ noDelay: true, keepAlive: true, requestTimeout: 0 }, (req, res) => {
  const scanner = new BodyScanner({ stream: '"stream":true', ...faultNeedles });
  req.on('data', (/** @type {Buffer} */ chunk) => {
    stats.bytesIn += chunk.length;
    scanner.push(chunk);
  });
  req.on('end', () => {
    stats.requests++;
    const path = (req.url ?? '').split('?')[0] ?? '';
    const protocol = protocolOf(path);
    const media = protocol ? undefined : mediaAnswer(req.method ?? 'GET', path);
    if (!protocol && !media) {
      const body = Buffer.from('{"error":{"message":"unknown path","type":"invalid_request_error","param":null,"code":null}}');
      res.writeHead(404, { 'content-type': 'application/json', 'content-length': body.length });
      res.end(body);
      return;
    }
    const { found } = scanner;
    for (const status of /** @type {const} */ ([429, 500])) {
      if (found.has(`${status}`)) {
        stats.faults[status]++;
        answerErrorStatus(res, status, protocol === 'messages');
        return;
      }
    }
    if (found.has('cut')) {
      stats.faults.cut++;
      cutHalfway(res);
    }
    if (media) {
      stats.media++;
      media(res);
    } else if (found.has('stream')) answerStream(/** @type {Protocol} */ (protocol), res);
    else answerJson(/** @type {Protocol} */ (protocol), res);
  });
});
server.keepAliveTimeout = 120_000;
server.headersTimeout = 60_000;

/** @param {Protocol} protocol @param {http.ServerResponse} res */
function answerJson(protocol, res) {
  stats.json++;
  const body = jsonFor(protocol);
  const send = () => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length, 'x-request-id': 'req_mock' });
    res.end(body);
  };
  if (config.ttfbMs > 0) setTimeout(send, config.ttfbMs);
  else send();
}

/** @param {Protocol} protocol @param {http.ServerResponse} res */
function answerStream(protocol, res) {
  stats.streams++;
  stats.open++;
  const { groups, length } = streamFor(protocol);
  const intervalMs = config.intervalMs;
  let next = 0;
  /** @type {NodeJS.Timeout | undefined} */
  let timer;
  let done = false;
  const finish = () => {
    if (done) return;
    done = true;
    stats.open--;
    if (timer) clearInterval(timer);
  };
  res.on('close', () => {
    if (!res.writableFinished) stats.aborted++;
    finish();
  });
  const writeNext = () => {
    if (done) return;
    const group = /** @type {Buffer} */ (groups[next++]);
    if (next >= groups.length) {
      res.end(group);
      finish();
    } else {
      res.write(group);
    }
  };
  const start = () => {
    if (done) return;
    res.writeHead(200, { 'content-type': 'text/event-stream', 'content-length': length, 'cache-control': 'no-cache', 'x-request-id': 'req_mock' });
    if (intervalMs <= 0) {
      while (!done) writeNext();
      return;
    }
    writeNext();
    if (!done) timer = setInterval(writeNext, intervalMs);
  };
  if (config.ttfbMs > 0) setTimeout(start, config.ttfbMs);
  else start();
}

serveIpc({
  config(/** @type {Partial<typeof config>} */ args) {
    Object.assign(config, args);
    return config;
  },
  stats() {
    return { ...stats, memory: process.memoryUsage().rss };
  },
  resetStats() {
    for (const key of Object.keys(stats)) if (key !== 'open' && key !== 'faults') /** @type {any} */ (stats)[key] = 0;
    stats.faults = { 429: 0, 500: 0, cut: 0 };
    return stats;
  },
  shutdown() {
    setImmediate(() => process.exit(0));
    return true;
  },
});

server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  announce({ port: typeof address === 'object' && address ? address.port : 0 });
});
