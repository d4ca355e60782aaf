import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { encodePng } from '../../src/providers/codecs/png.js';
import { answerEmbeddings } from './fake-openai-embeddings.js';
import { answerTranscription } from './fake-openai-transcriptions.js';
import { sendJson, serveBytes, startMediaServer, type MediaRequest, type MediaServer } from './media-server.js';

/** A 2×2 PNG the fake answers with. */
export const FAKE_PNG_B64 = Buffer.from(encodePng({ width: 2, height: 2, pixels: new Uint8Array(16).fill(200) })).toString('base64');
/** The bytes of the fake's finished video. */
export const FAKE_VIDEO = Buffer.from(Array.from({ length: 200_000 }, (_, i) => (i * 7) % 251));

export interface FakeOpenAIMedia extends MediaServer {
  /** Base URL with `/v1`, as the OpenAI provider takes it. */
  baseURL: string;
  /** Statuses `GET /v1/videos/{id}` answers in turn (the last one repeats). */
  videoStatuses: Record<string, unknown>[];
  /** Answer the next request with this error instead. */
  failNext?: { status: number; body: unknown } | undefined;
  /** When set, speech answers send a first chunk, then wait for this promise before the rest. */
  speechGate?: Promise<void> | undefined;
  /** When set, the next speech answer sends its first chunk, then drops the connection. */
  cutSpeech?: boolean;
  /** When set, the next request is answered with headers (200, JSON), then nothing until the client hangs up. */
  stallNext?: boolean;
}

/**
 * A fake of OpenAI's media endpoints on loopback: images (JSON or partial-image SSE), edits
 * (multipart, parsed part by part), speech (chunked bytes), videos (create, scripted retrieve,
 * content with Range), embeddings (`fake-openai-embeddings.ts`), transcriptions
 * (`fake-openai-transcriptions.ts`). Every request is recorded.
 */
export async function startFakeOpenAIMedia(): Promise<FakeOpenAIMedia> {
  let fake!: FakeOpenAIMedia;
  const server = await startMediaServer(async (request, response) => {
    if (fake.failNext) {
      const { status, body } = fake.failNext;
      fake.failNext = undefined;
      return sendJson(response, body, status);
    }
    if (fake.stallNext) {
      fake.stallNext = false;
      response.writeHead(200, { 'content-type': 'application/json' });
      response.flushHeaders();
      await once(response, 'close');
      return;
    }
    const { method, path } = request;
    if (method === 'POST' && path === '/v1/embeddings') return answerEmbeddings(request, response, 'sk-upstream-openai');
    if (method === 'POST' && path === '/v1/audio/transcriptions') return answerTranscription(request, response, 'sk-upstream-openai');
    if (method === 'POST' && (path === '/v1/images/generations' || path === '/v1/images/edits')) {
      const edit = path.endsWith('edits');
      const stream = edit ? request.parts?.find((part) => part.name === 'stream')?.value === 'true' : request.json?.stream === true;
      if (!stream)
        return sendJson(response, {
          created: 1_700_000_000,
          data: [{ b64_json: FAKE_PNG_B64 }],
          size: '1024x1024',
          quality: 'high',
          usage: { input_tokens: 5, output_tokens: 10, total_tokens: 15 },
        });
      const prefix = edit ? 'image_edit' : 'image_generation';
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      for (let index = 0; index < 2; index++) {
        response.write(
          `event: ${prefix}.partial_image\ndata: ${JSON.stringify({ type: `${prefix}.partial_image`, b64_json: FAKE_PNG_B64, partial_image_index: index, created_at: 1_700_000_000, size: '1024x1024' })}\n\n`,
        );
      }
      response.end(
        `event: ${prefix}.completed\ndata: ${JSON.stringify({ type: `${prefix}.completed`, b64_json: FAKE_PNG_B64, created_at: 1_700_000_000, size: '1024x1024', usage: { input_tokens: 5, output_tokens: 10, total_tokens: 15 } })}\n\n`,
      );
      return;
    }
    if (method === 'POST' && path === '/v1/audio/speech') {
      response.writeHead(200, { 'content-type': 'audio/mpeg', 'transfer-encoding': 'chunked' });
      response.write(Buffer.from('first-chunk;'));
      if (fake.cutSpeech) {
        fake.cutSpeech = false;
        await sleep(5);
        response.socket?.destroy();
        return;
      }
      if (fake.speechGate) await fake.speechGate;
      else await sleep(5);
      response.end(Buffer.from('second-chunk'));
      return;
    }
    if (method === 'POST' && path === '/v1/videos') {
      return sendJson(response, {
        id: 'video_upstream_1',
        object: 'video',
        model: request.json?.model,
        status: 'queued',
        progress: 0,
        created_at: 1_700_000_000,
      });
    }
    const video = /^\/v1\/videos\/([^/]+)(\/content)?$/.exec(path);
    if (method === 'GET' && video) {
      if (video[1] !== 'video_upstream_1')
        return sendJson(response, { error: { message: 'Video not found', type: 'invalid_request_error', code: 'not_found' } }, 404);
      if (video[2]) return serveBytes(request, response, FAKE_VIDEO);
      const status = fake.videoStatuses.length > 1 ? fake.videoStatuses.shift()! : fake.videoStatuses[0]!;
      return sendJson(response, { id: 'video_upstream_1', object: 'video', model: 'sora-2', created_at: 1_700_000_000, ...status });
    }
    sendJson(response, { error: { message: `No route ${method} ${path}` } }, 404);
  });
  fake = Object.assign(server, { baseURL: `${server.url}/v1`, videoStatuses: [{ status: 'queued', progress: 0 }] }) as FakeOpenAIMedia;
  return fake;
}

/** The requests to one path. */
export function requestsTo(server: MediaServer, method: string, path: string | RegExp): MediaRequest[] {
  return server.requests.filter((request) => request.method === method && (typeof path === 'string' ? request.path === path : path.test(request.path)));
}
