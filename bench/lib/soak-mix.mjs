// The soak's traffic: every client protocol against every upstream kind (passthrough and
// translated), as JSON and SSE; image generations, multipart image edits (100–400 KB uploads),
// speech, video create / status / content; client aborts mid-stream and mid-upload. Requests
// that may meet an upstream fault carry its marker (lib/mock-faults.mjs) in their prompt, so each
// observation says which fault, if any, the upstream was told to inject.
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { buildRequest } from './http-client.mjs';
import { exchange, StreamTracker } from './load.mjs';
import { FAULT_KINDS, faultMarker } from './mock-faults.mjs';
import { SPEECH_BYTES, VIDEO_BYTES } from './mock-media.mjs';
import { BENCH_KEY, checkAnswer, target } from './payloads.mjs';

/** @typedef {import('./mock-faults.mjs').FaultKind} FaultKind */
/** @typedef {import('./http-client.mjs').Connection} Connection */

/**
 * What one request did, for `classify` (lib/soak-outcomes.mjs).
 * @typedef {object} Observation
 * @property {string} route
 * @property {'sse' | 'json' | 'binary' | 'upload-abort'} shape
 * @property {FaultKind | undefined} fault   the fault the upstream was asked to inject
 * @property {boolean} abort                 the client meant to leave mid-answer
 * @property {number} status                 0 when no status line arrived
 * @property {Error} [error]                 transport failure, timeout or our own abort
 * @property {boolean} [terminalSeen]        SSE: the protocol's end event arrived
 * @property {string} [tail]                 SSE: the last 8 KB
 * @property {string} [problem]              a 2xx answer that fails its check
 * @property {number} latencyMs
 */

/** The message of the error a deliberate client abort ends the exchange with. */
export const CLIENT_ABORT = 'soak: client abort';
/** SSE frames a client reads before it leaves. */
const FRAMES_BEFORE_ABORT = 3;
/** Bytes of an SSE answer kept to look for its error event. */
const SSE_TAIL = 8192;
const UPLOAD_SIZES = [100, 200, 300, 400].map((kb) => kb * 1024);
const VOICE = 'en_female_anna_v1';
/** Video tasks the soak remembers, to read their status and content later. */
const KEPT_VIDEOS = 256;

const now = () => performance.now();

/**
 * The scenarios of the mix with their weights, bound to a gateway port.
 * @param {{ port: number, mockOrigin: string, faultRate: number, exclude?: string[], taskTtlMs?: number }} options
 *   `exclude`: routes starting with these are left out; `taskTtlMs`: how long the gateway keeps a
 *   video task, so that only tasks younger than that are read back
 */
export function soakMix({ port, mockOrigin, faultRate, exclude = [], taskTtlMs = Infinity }) {
  const host = `127.0.0.1:${port}`;
  const openai = { authorization: `Bearer ${BENCH_KEY}` };
  const json = { ...openai, 'content-type': 'application/json' };
  /** The video tasks created lately, and those a status read has shown completed. */
  /** @type {Task[]} */
  const videos = [];
  /** @type {Task[]} */
  const completed = [];
  // A task is read back only well within the gateway's retention (it counts from the last write).
  const fresh = (/** @type {Task[]} */ list) => list.filter((task) => Date.now() - task.createdAt < taskTtlMs * 0.8);

  /** A fault for this request: `faultRate` of them get one, the kinds in equal shares. */
  const drawFault = () => (Math.random() < faultRate ? FAULT_KINDS[Math.floor(Math.random() * FAULT_KINDS.length)] : undefined);
  /** The same request bytes for every fault (and none), built once. @param {(marker: string) => Buffer} build */
  const variants = (build) => {
    /** @type {Map<FaultKind | undefined, Buffer>} */
    const map = new Map([[undefined, build('')]]);
    for (const kind of FAULT_KINDS) map.set(kind, build(` ${faultMarker(kind)}`));
    return map;
  };

  /** @type {{ route: string, weight: number, run: (conn: Connection, fault: FaultKind | undefined) => Promise<Observation>, faults: boolean }[]} */
  const scenarios = [];

  // Text: 9 cells × JSON / SSE, 70% of the traffic.
  const textCells = [
    'chat-pass',
    'responses-to-chat',
    'messages-to-chat',
    'responses-pass',
    'chat-to-responses',
    'messages-to-responses',
    'messages-pass',
    'chat-to-messages',
    'responses-to-messages',
  ];
  /** @type {((conn: Connection) => Promise<Observation>)[]} */
  const abortable = [];
  for (const cell of textCells) {
    for (const stream of [false, true]) {
      const t = target({ arm: 'infergate', cell, stream, port, mockOrigin });
      const requests = variants((marker) => target({ arm: 'infergate', cell, stream, port, mockOrigin, prompt: `Name three colours.${marker}` }).request);
      const route = `${cell} ${stream ? 'stream' : 'json'}`;
      /** @param {Connection} conn @param {FaultKind | undefined} fault @param {boolean} abort */
      const run = async (conn, fault, abort) => {
        const started = now();
        const tracker = stream ? new StreamTracker(started, t.terminal) : undefined;
        // The tracker keeps 256 bytes; an error event (a whole failed Responses object) needs more.
        let tail = '';
        const result = await exchange(conn, /** @type {Buffer} */ (requests.get(fault)), {
          keepBody: !stream,
          ...(tracker
            ? {
                onBody(/** @type {Buffer} */ chunk) {
                  tracker.onBody(chunk);
                  tail = (tail + chunk.toString('utf8')).slice(-SSE_TAIL);
                  if (abort && tracker.frames >= FRAMES_BEFORE_ABORT) conn.fail(new Error(CLIENT_ABORT));
                },
              }
            : {}),
        });
        const ok2xx = result.status >= 200 && result.status < 300 && !result.error;
        /** @type {Observation} */
        const obs = {
          route: abort ? 'abort mid-stream' : route,
          shape: stream ? 'sse' : 'json',
          fault,
          abort,
          status: result.status,
          latencyMs: now() - started,
        };
        if (result.error) obs.error = result.error;
        if (tracker) {
          obs.terminalSeen = tracker.terminalSeen;
          obs.tail = tail;
          if (ok2xx && !tracker.terminalSeen) obs.problem = `stream ended without ${t.terminal}`;
        } else if (ok2xx) {
          const problem = checkAnswer(result.body, t);
          if (problem) obs.problem = problem;
        }
        return obs;
      };
      scenarios.push({ route, weight: 70 / 18, faults: true, run: (conn, fault) => run(conn, fault, false) });
      if (stream) abortable.push((conn) => run(conn, undefined, true));
    }
  }
  scenarios.push({
    route: 'abort mid-stream',
    weight: 4,
    faults: false,
    run: (conn) => /** @type {(conn: Connection) => Promise<Observation>} */ (pick(abortable))(conn),
  });

  // Images.
  const generations = variants((marker) =>
    buildRequest(
      '/v1/images/generations',
      json,
      JSON.stringify({ model: 'bench-image', prompt: `a lighthouse at dusk${marker}`, size: '256x256', n: 1 }),
      host,
    ),
  );
  scenarios.push({
    route: 'images/generations',
    weight: 6,
    faults: true,
    run: (conn, fault) =>
      call(conn, 'images/generations', 'json', fault, /** @type {Buffer} */ (generations.get(fault)), (body) =>
        body.includes('"b64_json"') ? undefined : 'no b64_json in the answer',
      ),
  });
  const picture = randomBytes(Math.max(...UPLOAD_SIZES));
  const edits = UPLOAD_SIZES.map((size) => variants((marker) => editRequest(host, `make it blue${marker}`, picture.subarray(0, size))));
  scenarios.push({
    route: 'images/edits',
    weight: 4,
    faults: true,
    run: (conn, fault) =>
      call(conn, 'images/edits', 'json', fault, /** @type {Buffer} */ (pick(edits).get(fault)), (body) =>
        body.includes('"b64_json"') ? undefined : 'no b64_json in the answer',
      ),
  });
  scenarios.push({
    route: 'abort mid-upload',
    weight: 1,
    faults: false,
    run: () => abortUpload(port, /** @type {Buffer} */ (/** @type {Map<undefined, Buffer>} */ (edits[edits.length - 1]).get(undefined))),
  });

  // Speech.
  const speech = variants((marker) =>
    buildRequest(
      '/v1/audio/speech',
      json,
      JSON.stringify({ model: 'bench-speech', input: `Hello from the soak.${marker}`, voice: VOICE, response_format: 'mp3' }),
      host,
    ),
  );
  scenarios.push({
    route: 'audio/speech',
    weight: 5,
    faults: true,
    run: (conn, fault) => call(conn, 'audio/speech', 'binary', fault, /** @type {Buffer} */ (speech.get(fault)), undefined, SPEECH_BYTES),
  });

  // Video: create, then status and content of earlier tasks.
  const creates = variants((marker) =>
    buildRequest('/v1/video/generations', json, JSON.stringify({ model: 'bench-video', prompt: `a bouncing ball${marker}`, seconds: 4 }), host),
  );
  scenarios.push({
    route: 'video create',
    weight: 3,
    faults: true,
    run: (conn, fault) =>
      call(conn, 'video create', 'json', fault, /** @type {Buffer} */ (creates.get(fault)), (body) => {
        const id = /"id":"(video_[^"]+)"/.exec(body)?.[1];
        if (!id) return 'no video_ id in the answer';
        remember(videos, { id, createdAt: Date.now() });
        return undefined;
      }),
  });
  /** A status read of a recent task (a create while there is none). @param {Connection} conn */
  const readStatus = (conn) => {
    const live = fresh(videos);
    const task = live.length ? pick(live) : undefined;
    if (!task) return call(conn, 'video create', 'json', undefined, /** @type {Buffer} */ (creates.get(undefined)), () => undefined);
    const request = buildRequest(`/v1/video/generations/${task.id}`, openai, '', host, 'GET');
    return call(conn, 'video status', 'json', undefined, request, (body) => {
      const status = /"status":"([a-z_]+)"/.exec(body)?.[1];
      if (status === 'completed' && !completed.includes(task)) remember(completed, task);
      return status === 'queued' || status === 'in_progress' || status === 'completed' ? undefined : `unexpected task: ${body.slice(0, 160)}`;
    });
  };
  scenarios.push({ route: 'video status', weight: 3, faults: false, run: readStatus });
  scenarios.push({
    route: 'video content',
    weight: 1,
    faults: false,
    // Like a client, download only what a status read has shown completed.
    run: (conn) => {
      const ready = fresh(completed);
      if (ready.length === 0) return readStatus(conn);
      const request = buildRequest(`/v1/videos/${pick(ready).id}/content`, openai, '', host, 'GET');
      return call(conn, 'video content', 'binary', undefined, request, undefined, VIDEO_BYTES);
    },
  });

  const kept = scenarios.filter((s) => !exclude.some((prefix) => s.route.startsWith(prefix)));
  const total = kept.reduce((sum, s) => sum + s.weight, 0);
  return {
    scenarios: kept,
    /** One request of the mix, drawn by weight, with its fault drawn too. @param {Connection} conn */
    next(conn) {
      let r = Math.random() * total;
      const scenario = kept.find((s) => (r -= s.weight) < 0) ?? /** @type {(typeof kept)[number]} */ (kept[kept.length - 1]);
      return scenario.run(conn, scenario.faults ? drawFault() : undefined);
    },
  };
}

/**
 * One exchange whose whole answer is read: JSON checked by `check`, binary by its length.
 * @param {Connection} conn @param {string} route @param {'json' | 'binary'} shape @param {FaultKind | undefined} fault @param {Buffer} request
 * @param {((body: string) => string | undefined) | undefined} check @param {number} [expectedBytes]
 * @returns {Promise<Observation>}
 */
async function call(conn, route, shape, fault, request, check, expectedBytes) {
  const started = now();
  const result = await exchange(conn, request, { keepBody: shape === 'json' });
  /** @type {Observation} */
  const obs = { route, shape, fault, abort: false, status: result.status, latencyMs: now() - started };
  if (result.error) obs.error = result.error;
  else if (result.status >= 200 && result.status < 300) {
    const problem =
      shape === 'json' ? check?.(result.body ?? '') : result.bytes !== expectedBytes ? `${result.bytes} bytes, expected ${expectedBytes}` : undefined;
    if (problem) obs.problem = problem;
  }
  return obs;
}

/**
 * Sends the head and part of an upload's body on a fresh socket, then leaves.
 * @param {number} port @param {Buffer} request @returns {Promise<Observation>}
 */
function abortUpload(port, request) {
  const started = now();
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: '127.0.0.1' });
    const done = (/** @type {Error | undefined} */ error) => {
      socket.destroy();
      resolve({
        route: 'abort mid-upload',
        shape: 'upload-abort',
        fault: undefined,
        abort: true,
        status: 0,
        error: error ?? new Error(CLIENT_ABORT),
        latencyMs: now() - started,
      });
    };
    socket.once('error', done);
    socket.once('connect', () => {
      socket.write(request.subarray(0, Math.floor(request.length / 3)));
      setTimeout(() => done(undefined), 20);
    });
  });
}

/** A multipart `POST /v1/images/edits` with one PNG-named file. @param {string} host @param {string} prompt @param {Buffer} image */
function editRequest(host, prompt, image) {
  const boundary = `soak${randomBytes(8).toString('hex')}`;
  const field = (/** @type {string} */ name, /** @type {string} */ value) =>
    `--${boundary}\r\ncontent-disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
  const head =
    field('model', 'bench-image') +
    field('prompt', prompt) +
    field('size', '256x256') +
    `--${boundary}\r\ncontent-disposition: form-data; name="image"; filename="in.png"\r\ncontent-type: image/png\r\n\r\n`;
  const body = Buffer.concat([Buffer.from(head), image, Buffer.from(`\r\n--${boundary}--\r\n`)]);
  return buildRequest('/v1/images/edits', { authorization: `Bearer ${BENCH_KEY}`, 'content-type': `multipart/form-data; boundary=${boundary}` }, body, host);
}

/** @typedef {{ id: string, createdAt: number }} Task */

/** Adds to a list of the latest tasks. @param {Task[]} list @param {Task} task */
function remember(list, task) {
  list.push(task);
  if (list.length > KEPT_VIDEOS) list.shift();
}

/** @template T @param {readonly T[]} items @returns {T} */
function pick(items) {
  return /** @type {T} */ (items[Math.floor(Math.random() * items.length)]);
}
