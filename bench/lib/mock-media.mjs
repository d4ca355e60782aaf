// The mock upstream's media answers, OpenAI-shaped: images (generations and multipart edits, one
// small image as base64), speech (audio bytes) and the Videos API (create, status, content). Video
// ids carry their creation time, so the mock keeps no per-task state however long a soak runs.
import { randomBytes } from 'node:crypto';

const IMAGE_BYTES = 12 * 1024;
export const SPEECH_BYTES = 48 * 1024;
export const VIDEO_BYTES = 64 * 1024;
/** A video task reads `completed` this long after it was created. */
const VIDEO_RENDER_MS = 1000;

const imageJson = Buffer.from(
  JSON.stringify({
    created: 1_700_000_000,
    data: [{ b64_json: randomBytes(IMAGE_BYTES).toString('base64'), revised_prompt: 'a mock picture' }],
    usage: { input_tokens: 10, output_tokens: 1000, total_tokens: 1010, input_tokens_details: { text_tokens: 10, image_tokens: 0 } },
  }),
);
const speech = randomBytes(SPEECH_BYTES);
const video = randomBytes(VIDEO_BYTES);
let nextVideo = 0;

/** @typedef {(res: import('node:http').ServerResponse) => void} Answer */

/**
 * The answer to a media request, or undefined when the path is not a media one.
 * @param {string} method @param {string} path without the query
 * @returns {Answer | undefined}
 */
export function mediaAnswer(method, path) {
  if (method === 'POST' && (path.endsWith('/images/generations') || path.endsWith('/images/edits'))) return (res) => send(res, 'application/json', imageJson);
  if (method === 'POST' && path.endsWith('/audio/speech')) return (res) => send(res, 'audio/mpeg', speech);
  if (method === 'POST' && path.endsWith('/videos')) return (res) => sendJson(res, videoObject(`video_mock_${Date.now()}_${nextVideo++}`));
  const match = /\/videos\/([^/]+)(\/content)?$/.exec(path);
  if (method === 'GET' && match) {
    const id = decodeURIComponent(/** @type {string} */ (match[1]));
    return match[2] ? (res) => send(res, 'video/mp4', video) : (res) => sendJson(res, videoObject(id));
  }
  return undefined;
}

/** @param {string} id */
function videoObject(id) {
  const createdMs = Number(id.split('_')[2]) || Date.now();
  const done = Date.now() - createdMs >= VIDEO_RENDER_MS;
  const createdAt = Math.floor(createdMs / 1000);
  return {
    id,
    object: 'video',
    model: 'mock-video',
    status: done ? 'completed' : 'queued',
    progress: done ? 100 : 0,
    created_at: createdAt,
    ...(done ? { completed_at: createdAt + 1 } : {}),
    seconds: '4',
    size: '320x180',
  };
}

/** @param {import('node:http').ServerResponse} res @param {unknown} value */
function sendJson(res, value) {
  send(res, 'application/json', Buffer.from(JSON.stringify(value)));
}

/** @param {import('node:http').ServerResponse} res @param {string} type @param {Buffer} body */
function send(res, type, body) {
  res.writeHead(200, { 'content-type': type, 'content-length': body.length });
  res.end(body);
}
