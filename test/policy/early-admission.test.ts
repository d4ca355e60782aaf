import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import { request as httpRequest, type ClientRequest } from 'node:http';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGateway, type Gateway } from '../../src/gateway.js';
import { encodePng } from '../../src/providers/codecs/png.js';
import { createAnthropicProvider } from '../../src/providers/anthropic/anthropic-provider.js';
import { createLocalProvider, localModels } from '../../src/providers/local/local-provider.js';
import { startFakeAnthropic } from '../fakes/fake-anthropic.js';
import type { FakeUpstream } from '../fakes/fake-server.js';
import { serve, type Served } from '../helpers/serve.js';
import { withinOneMinute } from '../helpers/rate-window.js';

/**
 * The key's limits are checked before a request's body is read (`Route.admits`): an upload over
 * the key's concurrency is refused while its body is still on the way, token counts, usage
 * reports and video downloads count as requests, and a spent budget refuses an upload at once
 * when the key may use no model it would spare.
 */
const BOUNDARY = 'early-admission-boundary';
const PAID = { id: 'paid-transcription', provider: 'local', kind: 'transcription', upstreamModel: 'local-transcription', price: { audioSecond: 1 } } as const;
const SEEDREAM = { id: 'seedream-local', provider: 'local', kind: 'image', family: 'seedream', upstreamModel: 'local-image' } as const;
const GPT_IMAGE = { id: 'gpt-image-local', provider: 'local', kind: 'image', family: 'gpt-image', upstreamModel: 'local-image' } as const;
const FREE = { id: 'free-transcription', provider: 'local', kind: 'transcription', upstreamModel: 'local-transcription', price: { audioSecond: 0 } } as const;

let anthropic: FakeUpstream;
let gateway: Gateway;
let served: Served;
let wav: Buffer;

beforeAll(async () => {
  anthropic = await startFakeAnthropic();
  gateway = createGateway({
    keys: [
      { key: 'sk-one-at-a-time', id: 'one-at-a-time', limits: { concurrentRequests: 1 } },
      { key: 'sk-two-a-minute', id: 'two-a-minute', limits: { requestsPerMinute: 2 } },
      { key: 'sk-four-a-minute', id: 'four-a-minute', limits: { requestsPerMinute: 4 } },
      { key: 'sk-no-quota', id: 'no-quota', limits: { quota: 0 }, budget: { usd: 0 } },
      { key: 'sk-paid-only', id: 'paid-only', models: [PAID.id], budget: { usd: 0 } },
      { key: 'sk-paid-and-free', id: 'paid-and-free', models: [PAID.id, FREE.id], budget: { usd: 0 } },
      { key: 'sk-free', id: 'free' },
    ],
    providers: {
      local: createLocalProvider({ chunkDelayMs: 0, videoRenderMs: 0 }),
      claude: createAnthropicProvider({ baseURL: anthropic.url, apiKey: 'up-key' }),
    },
    models: [...localModels('local'), PAID, FREE, SEEDREAM, GPT_IMAGE, { id: 'claude', provider: 'claude', upstreamModel: 'claude-sonnet-4-5' }],
    videoRefreshIntervalMs: 0,
    logger: false,
  });
  served = await serve(gateway);
  const speech = await new OpenAI({ baseURL: `${served.url}/v1`, apiKey: 'sk-free', maxRetries: 0 }).audio.speech.create({
    model: 'local-speech',
    voice: 'en_female_anna_v1',
    input: 'Admitted first.',
    response_format: 'wav',
  });
  wav = Buffer.from(await speech.arrayBuffer());
});

afterAll(async () => {
  await served.close();
  await gateway.dispose();
  await anthropic.close();
});

interface OpenUpload {
  /** The gateway's answer, whenever it comes (before the body ends, for a refusal). */
  answer: Promise<{ status: number; body: string }>;
  /** Bytes of the body written so far. */
  written(): number;
  /** Sends the rest of the file and ends the body. */
  finish(): void;
  request: ClientRequest;
}

/**
 * A multipart POST whose body is sent in part: `head`, then nothing until `finish` sends `rest`.
 * Node's client, so that an answer can arrive while the body is still open.
 */
function openForm(key: string, path: string, head: Buffer, rest: Buffer): OpenUpload {
  let written = 0;
  const request = httpRequest(`${served.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
  });
  const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
    request.on('response', (response) => {
      let body = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode!, body }));
    });
    request.on('error', reject);
  });
  const write = (bytes: Buffer) => {
    written += bytes.length;
    request.write(bytes);
  };
  write(head);
  return {
    answer,
    written: () => written,
    finish: () => {
      write(rest);
      request.end();
    },
    request,
  };
}

const field = (name: string, value: string) => Buffer.from(`--${BOUNDARY}\r\ncontent-disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`);
const fileHead = (name: string, filename: string, type: string) =>
  Buffer.from(`--${BOUNDARY}\r\ncontent-disposition: form-data; name="${name}"; filename="${filename}"\r\ncontent-type: ${type}\r\n\r\n`);
const filePart = (name: string, filename: string, type: string, bytes: Buffer) => Buffer.concat([fileHead(name, filename, type), bytes, Buffer.from('\r\n')]);
const END = Buffer.from(`--${BOUNDARY}--\r\n`);

/** A transcription upload sent in part: the model field and half the file, the rest on `finish`. */
function openUpload(key: string, model: string): OpenUpload {
  const half = Math.floor(wav.length / 2);
  const head = Buffer.concat([field('model', model), fileHead('file', 'a.wav', 'audio/wav'), wav.subarray(0, half)]);
  return openForm(key, '/v1/audio/transcriptions', head, Buffer.concat([wav.subarray(half), Buffer.from('\r\n'), END]));
}

/** A whole upload, through the OpenAI SDK. */
async function transcribe(key: string, model: string): Promise<number> {
  const client = new OpenAI({ baseURL: `${served.url}/v1`, apiKey: key, maxRetries: 0 });
  try {
    await client.audio.transcriptions.create({ model, file: await OpenAI.toFile(wav, 'a.wav') });
    return 200;
  } catch (error) {
    if (error instanceof OpenAI.APIError) return error.status!;
    throw error;
  }
}

/** Asks until the key's one concurrency slot is seen taken (the open upload was admitted). */
async function untilSlotTaken(key: string): Promise<void> {
  for (;;) {
    const response = await fetch(`${served.url}/v1/usage`, { headers: { authorization: `Bearer ${key}` } });
    await response.arrayBuffer();
    if (response.status === 429) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('uploads are admitted before their body is read', () => {
  it('a key with concurrentRequests 1 holding one upload open gets its second upload refused before its body is read', async () => {
    const first = openUpload('sk-one-at-a-time', 'local-transcription');
    await untilSlotTaken('sk-one-at-a-time');

    const second = openUpload('sk-one-at-a-time', 'local-transcription');
    // Answered while its body is still open: nothing past the first bytes was needed.
    const refused = await second.answer;
    expect(refused.status).toBe(429);
    expect(JSON.parse(refused.body)).toMatchObject({ error: { code: 'rate_limit_exceeded', message: expect.stringContaining('concurrent') } });
    expect(second.written()).toBeLessThan(wav.length);
    second.request.destroy();

    first.finish();
    expect((await first.answer).status).toBe(200);
    // The slot came back when the first ended.
    expect(await transcribe('sk-one-at-a-time', 'local-transcription')).toBe(200);
  });

  it('an upload refused after admission (an unknown model) gives its slot back', async () => {
    expect(await transcribe('sk-one-at-a-time', 'no-such-model')).toBe(404);
    expect(await transcribe('sk-one-at-a-time', 'local-transcription')).toBe(200);
  });

  it('a spent budget refuses an upload before its body when every model of the kind the key may use costs money', async () => {
    const upload = openUpload('sk-paid-only', PAID.id);
    const refused = await upload.answer;
    expect(refused.status).toBe(429);
    expect(JSON.parse(refused.body)).toMatchObject({ error: { code: 'insufficient_quota' } });
    upload.request.destroy();
  });

  it('a spent budget waits for the model when the key may use a free one: the paid model is refused, the free one served', async () => {
    expect(await transcribe('sk-paid-and-free', PAID.id)).toBe(429);
    expect(await transcribe('sk-paid-and-free', FREE.id)).toBe(200);
  });
});

describe('token counts, usage reports and video downloads count as requests', () => {
  const messages = [{ role: 'user' as const, content: 'How many tokens is this?' }];

  it('count_tokens, input_tokens and Gemini countTokens go through requests per minute; the upstream is not asked past it', async () => {
    await withinOneMinute();
    anthropic.reset();
    const claude = new Anthropic({ baseURL: served.url, apiKey: 'sk-two-a-minute', maxRetries: 0 });
    expect(await claude.messages.countTokens({ model: 'claude', messages })).toMatchObject({ input_tokens: expect.any(Number) });
    expect(await claude.messages.countTokens({ model: 'claude', messages })).toMatchObject({ input_tokens: expect.any(Number) });
    const third = await claude.messages.countTokens({ model: 'claude', messages }).catch((error: unknown) => error);
    expect(third).toBeInstanceOf(Anthropic.RateLimitError);
    expect(anthropic.requests.filter((request) => request.path === '/v1/messages/count_tokens')).toHaveLength(2);

    const openai = new OpenAI({ baseURL: `${served.url}/v1`, apiKey: 'sk-two-a-minute', maxRetries: 0 });
    await expect(openai.responses.inputTokens.count({ model: 'local-chat', input: 'Hi' })).rejects.toBeInstanceOf(OpenAI.RateLimitError);
    const google = new GoogleGenAI({ apiKey: 'sk-two-a-minute', httpOptions: { baseUrl: served.url, retryOptions: { attempts: 1 } } });
    await expect(google.models.countTokens({ model: 'local-chat', contents: 'Hi' })).rejects.toMatchObject({ status: 429 });
  });

  it('a key whose quota and budget are spent may still count: a count costs neither tokens nor dollars', async () => {
    const openai = new OpenAI({ baseURL: `${served.url}/v1`, apiKey: 'sk-no-quota', maxRetries: 0 });
    await expect(openai.chat.completions.create({ model: 'local-chat', messages })).rejects.toMatchObject({ status: 429, code: 'insufficient_quota' });
    expect(await openai.responses.inputTokens.count({ model: 'local-chat', input: 'Hi' })).toMatchObject({ input_tokens: expect.any(Number) });
  });

  it('GET /v1/usage and GET /v1/videos/{id}/content count as requests per minute (polling a task does not)', async () => {
    await withinOneMinute();
    const auth = { authorization: 'Bearer sk-four-a-minute' };
    const usage = () => fetch(`${served.url}/v1/usage`, { headers: auth });
    const first = await usage();
    expect(first.status).toBe(200);
    expect(first.headers.get('x-ratelimit-remaining-requests')).toBe('3');
    await first.arrayBuffer();

    const created = await fetch(`${served.url}/v1/video/generations`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'local-video', prompt: 'p', seconds: 1, size: '160x96' }),
    });
    const { id } = (await created.json()) as { id: string };
    for (;;) {
      const task = (await (await fetch(`${served.url}/v1/video/generations/${id}`, { headers: auth })).json()) as { status: string };
      if (task.status === 'completed') break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const content = () => fetch(`${served.url}/v1/videos/${id}/content`, { headers: auth });
    const download = await content();
    expect(download.status).toBe(200);
    expect(download.headers.get('x-ratelimit-remaining-requests')).toBe('1');
    expect((await download.arrayBuffer()).byteLength).toBeGreaterThan(0);
    expect((await (await content()).arrayBuffer()).byteLength).toBeGreaterThan(0);

    const refusedDownload = await content();
    expect(refusedDownload.status).toBe(429);
    expect(refusedDownload.headers.get('retry-after')).toMatch(/^\d+$/);
    await refusedDownload.arrayBuffer();
    const refusedUsage = await usage();
    expect(refusedUsage.status).toBe(429);
    await refusedUsage.arrayBuffer();
  });
});

describe('upload bounds as the parts arrive', () => {
  const png = () => Buffer.from(encodePng({ width: 4, height: 4, pixels: new Uint8Array(64).fill(200) }));

  it('16 files to transcriptions are refused at the second part, the others never sent', async () => {
    // The second part's header and its first bytes (a parser cannot tell a header has ended before).
    const second = Buffer.concat([fileHead('file', '1.wav', 'audio/wav'), wav.subarray(0, 1024)]);
    const head = Buffer.concat([field('model', 'local-transcription'), filePart('file', '0.wav', 'audio/wav', wav), second]);
    const rest = Buffer.concat([
      wav.subarray(1024),
      Buffer.from('\r\n'),
      ...Array.from({ length: 14 }, (_, index) => filePart('file', `${index + 2}.wav`, 'audio/wav', wav)),
      END,
    ]);
    const upload = openForm('sk-free', '/v1/audio/transcriptions', head, rest);
    const refused = await upload.answer;
    expect(refused.status).toBe(413);
    expect(JSON.parse(refused.body)).toMatchObject({ error: { param: 'file', message: 'At most 1 file may be uploaded.' } });
    expect(upload.written()).toBe(head.length);
    upload.request.destroy();
  });

  it("an edit whose form names the model first is held to the model's rules as its files arrive", async () => {
    // Seedream edits take 1 to 10 images: the 11th stops the reading.
    const ten = Array.from({ length: 10 }, (_, index) => filePart('image[]', `${index}.png`, 'image/png', png()));
    const head = Buffer.concat([field('model', SEEDREAM.id), field('prompt', 'p'), ...ten, fileHead('image[]', '10.png', 'image/png'), png()]);
    const upload = openForm('sk-free', '/v1/images/edits', head, Buffer.concat([Buffer.from('\r\n'), END]));
    const refused = await upload.answer;
    expect(refused.status).toBe(400);
    expect(JSON.parse(refused.body)).toMatchObject({
      error: { param: 'image', message: expect.stringContaining('takes 1 to 10 images to edit, received 11') },
    });
    upload.request.destroy();

    // A model that takes no edits at all: refused at the first file.
    const noEditsHead = Buffer.concat([field('model', GPT_IMAGE.id), fileHead('image', 'a.png', 'image/png'), png()]);
    const noEdits = openForm('sk-free', '/v1/images/edits', noEditsHead, Buffer.concat([Buffer.from('\r\n'), END]));
    const refusedAtOnce = await noEdits.answer;
    expect(refusedAtOnce.status).toBe(400);
    expect(JSON.parse(refusedAtOnce.body)).toMatchObject({ error: { param: 'model', code: 'model_not_supported' } });
    noEdits.request.destroy();

    // The same ten images are served, and the model may come after the files as before.
    const client = new OpenAI({ baseURL: `${served.url}/v1`, apiKey: 'sk-free', maxRetries: 0 });
    const images = await Promise.all(Array.from({ length: 10 }, (_, index) => OpenAI.toFile(png(), `${index}.png`, { type: 'image/png' })));
    expect((await client.images.edit({ image: images, prompt: 'p', model: SEEDREAM.id })).data).toHaveLength(1);
  });
});
