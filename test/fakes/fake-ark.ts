import { setTimeout as sleep } from 'node:timers/promises';
import { FAKE_PNG_B64, FAKE_VIDEO } from './fake-openai-media.js';
import { sendJson, serveBytes, startMediaServer, type MediaServer } from './media-server.js';

export interface FakeArk extends MediaServer {
  /** Ark API base, with `/api/v3`. */
  baseURL: string;
  /** Statuses the task query answers in turn (the last one repeats); `succeeded` adds the video URL. */
  taskStatuses: string[];
  /** Audio chunks the TTS answer carries (each one NDJSON line), and an optional error line. */
  speechChunks: Buffer[];
  speechError?: { code: number; message: string } | undefined;
}

/**
 * A fake of Volcengine Ark on loopback: Seedream `images/generations`, Seedance
 * `contents/generations/tasks` (create and query; a succeeded task points at the fake's own
 * "CDN" path, which serves the video with Range), the OpenAI-compatible chat endpoint, and the
 * speech service's `tts/unidirectional` (NDJSON lines of base64 audio, sent a few ms apart).
 */
export async function startFakeArk(): Promise<FakeArk> {
  let fake!: FakeArk;
  const server = await startMediaServer(async (request, response) => {
    const { method, path } = request;
    if (method === 'POST' && path === '/api/v3/images/generations') {
      const b64 = request.json?.response_format === 'b64_json';
      return sendJson(response, {
        model: request.json?.model,
        created: 1_700_000_001,
        data: [b64 ? { b64_json: FAKE_PNG_B64, size: '2048x2048' } : { url: 'https://ark-cdn.example/image.jpeg', size: '2048x2048' }],
        usage: { generated_images: 1, output_tokens: 16384, total_tokens: 16384 },
      });
    }
    if (method === 'POST' && path === '/api/v3/contents/generations/tasks') return sendJson(response, { id: 'cgt-20250101-abcd' });
    const task = /^\/api\/v3\/contents\/generations\/tasks\/([^/]+)$/.exec(path);
    if (method === 'GET' && task) {
      if (task[1] !== 'cgt-20250101-abcd') return sendJson(response, { error: { code: 'ResourceNotFound', message: 'task not found' } }, 404);
      const status = fake.taskStatuses.length > 1 ? fake.taskStatuses.shift()! : fake.taskStatuses[0]!;
      const now = Math.floor(Date.now() / 1000);
      return sendJson(response, {
        id: task[1],
        model: 'doubao-seedance-1-0-pro-250528',
        status,
        ...(status === 'succeeded' ? { content: { video_url: `${server.url}/cdn/video.mp4?X-Signature=abc` } } : {}),
        ...(status === 'failed'
          ? { error: { code: 'OutputVideoSensitiveContentDetected', message: 'The output video may contain sensitive information.' } }
          : {}),
        created_at: now - 30,
        updated_at: now,
      });
    }
    if (method === 'GET' && path === '/cdn/video.mp4') return serveBytes(request, response, FAKE_VIDEO);
    if (method === 'POST' && path === '/api/v3/chat/completions') {
      return sendJson(response, {
        id: 'chatcmpl-ark',
        object: 'chat.completion',
        created: 1_700_000_000,
        model: request.json?.model,
        choices: [{ index: 0, message: { role: 'assistant', content: 'Hello from Ark' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 },
      });
    }
    if (method === 'POST' && path === '/api/v3/tts/unidirectional') {
      response.writeHead(200, { 'content-type': 'application/json' });
      for (const chunk of fake.speechChunks) {
        response.write(JSON.stringify({ code: 0, message: '', data: chunk.toString('base64') }) + '\n');
        await sleep(5);
      }
      if (fake.speechError) response.end(JSON.stringify({ code: fake.speechError.code, message: fake.speechError.message, data: null }) + '\n');
      else response.end(JSON.stringify({ code: 20000000, message: 'OK', data: null, usage: { text_words: 5 } }) + '\n');
      return;
    }
    sendJson(response, { error: { code: 'NotFound', message: `No route ${method} ${path}` } }, 404);
  });
  fake = Object.assign(server, {
    baseURL: `${server.url}/api/v3`,
    taskStatuses: ['queued'],
    speechChunks: [Buffer.from('audio-1;'), Buffer.from('audio-2;'), Buffer.from('audio-3')],
  }) as FakeArk;
  return fake;
}
