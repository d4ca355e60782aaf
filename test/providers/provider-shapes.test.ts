import { afterAll, describe, expect, it } from 'vitest';
import { createGateway } from '../../src/gateway.js';
import { createLocalProvider, localModels } from '../../src/providers/local/local-provider.js';
import { normalizeProvider } from '../../src/providers/normalize-provider.js';
import type { CallContext, FlatProvider, PassthroughRequest, Provider } from '../../src/providers/provider.js';
import type { IRRequest } from '../../src/protocols/ir.js';
import type { ImageGenerationRequest, SpeechRequest, TaskCallContext, VideoJob, VideoRequest } from '../../src/providers/media.js';

const headers = { authorization: 'Bearer sk-1', 'content-type': 'application/json' };

/**
 * A custom provider of the first, flat shape, written as a class so its methods need their
 * `this`: what a user's provider from before the capability groups looks like.
 */
class FlatLocal implements FlatProvider {
  readonly type = 'flat-local';
  private readonly local = createLocalProvider({ chunkDelayMs: 0, videoRenderMs: 0 });
  streamText(request: IRRequest, call: CallContext) {
    return this.local.text!.stream!(request, call);
  }
  generateImage(request: ImageGenerationRequest, call: CallContext) {
    return this.local.images!.generate!(request, call);
  }
  synthesizeSpeech(request: SpeechRequest, call: CallContext) {
    return this.local.speech!.synthesize(request, call);
  }
  createVideo(request: VideoRequest, call: CallContext) {
    return this.local.video!.create(request, call);
  }
  getVideo(job: VideoJob, call: TaskCallContext) {
    return this.local.video!.get(job, call);
  }
  videoContent(job: VideoJob, request: { range?: string }, call: TaskCallContext) {
    return this.local.video!.content(job, request, call);
  }
}

describe('a custom provider of the old flat shape', () => {
  const gateway = createGateway({
    keys: [{ key: 'sk-1' }],
    providers: { mine: new FlatLocal() },
    models: localModels('mine'),
    logger: false,
    // A status read asks the provider every time.
    videoRefreshIntervalMs: 0,
  });
  afterAll(() => gateway.dispose());
  const post = (path: string, body: unknown) => gateway.fetch(`http://gw.test${path}`, { method: 'POST', headers, body: JSON.stringify(body) });

  it('still serves text', async () => {
    const response = await post('/v1/chat/completions', { model: 'local-chat', messages: [{ role: 'user', content: 'Hello' }] });
    expect(response.status).toBe(200);
    expect((await response.json()).choices[0].message.content).toContain('You said: "Hello"');
  });

  it('still serves images and speech', async () => {
    const image = await post('/v1/images/generations', { model: 'local-image', prompt: 'a red square', size: '64x64' });
    expect(image.status).toBe(200);
    expect((await image.json()).data[0].b64_json).toEqual(expect.any(String));

    const speech = await post('/v1/audio/speech', { model: 'local-speech', input: 'hi', voice: 'en_female_anna_v1', response_format: 'wav' });
    expect(speech.status).toBe(200);
    expect((await speech.arrayBuffer()).byteLength).toBeGreaterThan(44);
  });

  it('still serves a video task from submission to download', async () => {
    const created = await post('/v1/video/generations', { model: 'local-video', prompt: 'waves', seconds: 1 });
    expect(created.status).toBe(200);
    const { id } = (await created.json()) as { id: string };
    // The local model renders in no time here, so the first read finds the task done.
    const read = await gateway.fetch(`http://gw.test/v1/video/generations/${id}`, { headers });
    expect(await read.json()).toMatchObject({ id, status: 'completed' });
    const content = await gateway.fetch(`http://gw.test/v1/videos/${id}/content`, { headers });
    expect(content.status).toBe(200);
    expect(content.headers.get('content-type')).toBe('video/mp4');
    expect((await content.arrayBuffer()).byteLength).toBeGreaterThan(0);
  });
});

describe('a provider with only part of the video calls', () => {
  const make = (provider: Provider | FlatProvider) => () => createGateway({ keys: [{ key: 'sk-1' }], providers: { half: provider }, logger: false });
  const job = async () => ({ id: 'job_1' });

  it('is refused at construction with a TypeError naming it (capability shape)', () => {
    const partial = { type: 'half', version: 2, video: { create: job, get: async () => ({ status: 'queued' }) } } as unknown as Provider;
    expect(make(partial)).toThrow(TypeError);
    expect(make(partial)).toThrow(/options\.providers\.half has only part of the video calls: video needs create, get and content/);
  });

  it('is refused at construction with a TypeError naming it (flat shape)', () => {
    expect(make({ type: 'half', createVideo: job })).toThrow(/options\.providers\.half has only part of the video calls/);
  });

  it('text-only providers of either shape are fine', () => {
    const countTokens = async (_request: PassthroughRequest) => undefined;
    expect(make({ type: 'flat', countTokens })).not.toThrow();
    expect(make({ type: 'grouped', version: 2, text: { countTokens } })).not.toThrow();
  });
});

describe('moderation calls of a custom provider', () => {
  it('are grouped as the `moderation` capability from the flat shape, bound to the provider', async () => {
    class FlatModerator implements FlatProvider {
      readonly type = 'flat-moderator';
      private readonly answer = { results: [{ flagged: false, categories: {} }] };
      async moderate() {
        return this.answer;
      }
    }
    const provider = normalizeProvider('mine', new FlatModerator());
    expect(provider.moderation?.applyGuardrail).toBeUndefined();
    const call = { signal: new AbortController().signal, requestId: 'r' };
    expect(await provider.moderation!.moderate!({ model: 'm', input: ['x'] }, call)).toEqual({ results: [{ flagged: false, categories: {} }] });
    expect(normalizeProvider('plain', { type: 'plain' }).moderation).toBeUndefined();
  });

  it('are kept as they are on the capability shape', () => {
    const moderation = { applyGuardrail: async () => ({ action: 'NONE', assessments: [] }) };
    expect(normalizeProvider('grouped', { type: 'grouped', version: 2, moderation }).moderation).toBe(moderation);
  });
});
