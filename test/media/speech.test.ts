import type OpenAI from 'openai';
import { describe, expect, it, vi } from 'vitest';
import { requestsTo } from '../fakes/fake-openai-media.js';
import { decodeMp3, decodeOpus, mp3Frames, oggPages, parseWav, rms } from './audio-checks.js';
import { jsonHeaders, loopTurnsDuring, useMediaRig } from './helpers.js';

const rig = useMediaRig();

const INPUT = 'Hello there. This is the local voice, speaking slowly.';

async function speak(params: Partial<OpenAI.Audio.SpeechCreateParams> & { model?: string }): Promise<{ type: string | null; bytes: Buffer }> {
  const response = await rig.client.audio.speech.create({
    model: 'local-speech',
    voice: 'en_female_anna_v1',
    input: INPUT,
    ...params,
  } as OpenAI.Audio.SpeechCreateParams);
  return { type: response.headers.get('content-type'), bytes: Buffer.from(await response.arrayBuffer()) };
}

describe('speech: the local model, decoded', () => {
  it('wav: a PCM WAV header that matches the data, audible samples', async () => {
    const { type, bytes } = await speak({ response_format: 'wav' });
    expect(type).toBe('audio/wav');
    const wav = parseWav(bytes);
    expect(wav).toMatchObject({ format: 1, channels: 1, sampleRate: 24_000, bitsPerSample: 16, declaredDataBytes: bytes.length - 44 });
    const seconds = wav.samples.length / wav.sampleRate;
    expect(seconds).toBeGreaterThan(2);
    expect(seconds).toBeLessThan(8);
    expect(rms(wav.samples, 32768)).toBeGreaterThan(0.05);
  });

  it('mp3: every frame an MPEG-2 Layer III frame, decodable to the same length as the WAV', async () => {
    const { type, bytes } = await speak({ response_format: 'mp3' });
    expect(type).toBe('audio/mpeg');
    const frames = mp3Frames(bytes);
    expect(frames.sampleRate).toBe(24_000);
    expect(frames.count).toBeGreaterThan(50);
    const decoded = await decodeMp3(bytes);
    expect(decoded.errors).toBe(0);
    expect(decoded.sampleRate).toBe(24_000);
    const wav = parseWav((await speak({ response_format: 'wav' })).bytes);
    // MP3 adds encoder delay and padding: within 0.1 s.
    expect(Math.abs(decoded.samples.length - wav.samples.length)).toBeLessThan(2400);
    expect(rms(decoded.samples)).toBeGreaterThan(0.05);
  });

  it('opus: Ogg pages with valid CRCs, OpusHead/OpusTags, end of stream, decodable by libopus', async () => {
    const { type, bytes } = await speak({ response_format: 'opus' });
    expect(type).toBe('audio/ogg');
    const pages = oggPages(bytes);
    expect(pages[0]!.flags & 2).toBe(2);
    expect(pages[0]!.packets[0]!.toString('latin1', 0, 8)).toBe('OpusHead');
    expect(pages[0]!.packets[0]![9]).toBe(1);
    expect(pages[1]!.packets[0]!.toString('latin1', 0, 8)).toBe('OpusTags');
    expect(pages.at(-1)!.flags & 4).toBe(4);
    expect(pages.map((page) => page.sequence)).toEqual(pages.map((_, index) => index));
    expect(new Set(pages.map((page) => page.serial)).size).toBe(1);
    const granules = pages.slice(2).map((page) => Number(page.granule));
    expect(granules).toEqual([...granules].sort((a, b) => a - b));
    const decoded = await decodeOpus(bytes);
    expect(decoded.errors).toBe(0);
    expect(decoded.sampleRate).toBe(48_000);
    const seconds = decoded.samples.length / 48_000;
    const preSkip = pages[0]!.packets[0]!.readUInt16LE(10);
    expect(seconds).toBeCloseTo((granules.at(-1)! - preSkip) / 48_000, 1);
    expect(rms(decoded.samples)).toBeGreaterThan(0.05);
  });

  it('speed scales the duration; voices differ', async () => {
    const normal = parseWav((await speak({ response_format: 'wav' })).bytes).samples.length;
    const fast = parseWav((await speak({ response_format: 'wav', speed: 2 })).bytes).samples.length;
    const slow = parseWav((await speak({ response_format: 'wav', speed: 0.5 })).bytes).samples.length;
    expect(fast / normal).toBeCloseTo(0.5, 1);
    expect(slow / normal).toBeCloseTo(2, 1);
    const male = (await speak({ response_format: 'wav', voice: 'en_male_bob_v1' })).bytes;
    expect(male.equals((await speak({ response_format: 'wav' })).bytes)).toBe(false);
  });

  it.each([
    [{ voice: 'alloy' }, 'voice'],
    [{ voice: 'en_female' }, 'voice'],
    [{ speed: 2.5 }, 'speed'],
    [{ speed: 0.25 }, 'speed'],
    [{ response_format: 'aac' }, 'response_format'],
    [{ model: 'local-chat' }, 'model'],
    [{ input: '' }, 'input'],
  ])('rejects %j with a 400 naming %s', async (change, param) => {
    const response = await fetch(`${rig.app.server.url}/v1/audio/speech`, {
      method: 'POST',
      headers: jsonHeaders,
      body: JSON.stringify({ model: 'local-speech', voice: 'en_female_anna_v1', input: 'x', ...change }),
    });
    expect(response.status).toBe(400);
    expect((await response.json()).error.param).toBe(param);
  });
});

describe('speech: OpenAI-compatible upstream', () => {
  it('forwards the body with the upstream model and streams the audio as it arrives', async () => {
    let release!: () => void;
    rig.openaiFake.speechGate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const response = await fetch(`${rig.app.server.url}/v1/audio/speech`, {
      method: 'POST',
      headers: jsonHeaders,
      body: JSON.stringify({ model: 'oai-speech', voice: 'en_male_adam_v2', input: 'Hi', instructions: 'calm', speed: 1.5, response_format: 'mp3' }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('audio/mpeg');
    const reader = response.body!.getReader();
    // The first chunk arrives while the upstream is still holding the rest back.
    const first = await reader.read();
    expect(Buffer.from(first.value!).toString()).toBe('first-chunk;');
    release();
    const rest: Uint8Array[] = [];
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      rest.push(value);
    }
    expect(Buffer.concat(rest).toString()).toBe('second-chunk');
    rig.openaiFake.speechGate = undefined;
    const [sent] = requestsTo(rig.openaiFake, 'POST', '/v1/audio/speech').slice(-1);
    expect(sent!.json).toEqual({ model: 'gpt-4o-mini-tts', voice: 'en_male_adam_v2', input: 'Hi', instructions: 'calm', speed: 1.5, response_format: 'mp3' });
  });

  it('cuts the client’s transfer when the upstream drops mid-audio: an error, never a hang or a short file that looks complete', async () => {
    rig.openaiFake.cutSpeech = true;
    const response = await fetch(`${rig.app.server.url}/v1/audio/speech`, {
      method: 'POST',
      headers: jsonHeaders,
      body: JSON.stringify({ model: 'oai-speech', voice: 'en_male_adam_v2', input: 'Hi', response_format: 'mp3' }),
      signal: AbortSignal.timeout(5000),
    });
    expect(response.status).toBe(200);
    const error = await response.arrayBuffer().catch((failure: unknown) => failure);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).name).not.toBe('TimeoutError');
  });

  it('cuts that transfer quietly: nothing printed past the gateway’s logger', async () => {
    const printed = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      rig.openaiFake.cutSpeech = true;
      const response = await fetch(`${rig.app.server.url}/v1/audio/speech`, {
        method: 'POST',
        headers: jsonHeaders,
        body: JSON.stringify({ model: 'oai-speech', voice: 'en_male_adam_v2', input: 'Hi', response_format: 'mp3' }),
        signal: AbortSignal.timeout(5000),
      });
      const error = await response.arrayBuffer().catch((failure: unknown) => failure);
      expect(error).toBeInstanceOf(Error);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(printed.mock.calls.map((args) => String(args[0]))).not.toContainEqual(expect.stringContaining('Unexpected error while handling request'));
    } finally {
      printed.mockRestore();
    }
  });

  it('answers an upstream error with its status before any audio', async () => {
    rig.openaiFake.failNext = { status: 429, body: { error: { message: 'Rate limit reached', type: 'requests', code: 'rate_limit_exceeded' } } };
    await expect(rig.client.audio.speech.create({ model: 'oai-speech', voice: 'en_male_adam_v2', input: 'Hi' })).rejects.toMatchObject({
      status: 429,
      code: 'rate_limit_exceeded',
    });
  });
});

describe('speech: Volcengine (ark provider)', () => {
  it('sends the TTS request with the speech credentials and resource id, and decodes the NDJSON audio', async () => {
    const { type, bytes } = await speak({
      model: 'doubao-tts',
      voice: 'zh_female_cancan_mars_bigtts',
      input: '你好，世界',
      speed: 1.5,
      instructions: '用开心的语气',
    });
    expect(type).toBe('audio/mpeg');
    expect(bytes.toString()).toBe('audio-1;audio-2;audio-3');
    const [sent] = requestsTo(rig.arkFake, 'POST', '/api/v3/tts/unidirectional').slice(-1);
    expect(sent!.headers).toMatchObject({ 'x-api-app-id': 'app-123', 'x-api-access-key': 'speech-access', 'x-api-resource-id': 'seed-tts-1.0' });
    expect(sent!.headers['x-api-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(sent!.headers.authorization).toBeUndefined();
    expect(sent!.json).toEqual({
      user: { uid: 'infergate' },
      req_params: {
        text: '你好，世界',
        speaker: 'zh_female_cancan_mars_bigtts',
        audio_params: { format: 'mp3', sample_rate: 24_000, speech_rate: 50 },
        additions: JSON.stringify({ context_texts: ['用开心的语气'] }),
      },
    });
  });

  it('wav is PCM from Volcengine behind a WAV header; opus is ogg_opus', async () => {
    const wav = await speak({ model: 'doubao-tts', voice: 'zh_female_cancan_mars_bigtts', response_format: 'wav', speed: 0.5 });
    expect(wav.type).toBe('audio/wav');
    expect(parseWav(wav.bytes)).toMatchObject({ format: 1, channels: 1, sampleRate: 24_000, bitsPerSample: 16 });
    expect(wav.bytes.subarray(44).toString()).toBe('audio-1;audio-2;audio-3');
    expect(requestsTo(rig.arkFake, 'POST', '/api/v3/tts/unidirectional').at(-1)!.json.req_params.audio_params).toEqual({
      format: 'pcm',
      sample_rate: 24_000,
      speech_rate: -50,
    });
    const opus = await speak({ model: 'doubao-tts', voice: 'zh_female_cancan_mars_bigtts', response_format: 'opus' });
    expect(opus.type).toBe('audio/ogg');
    expect(requestsTo(rig.arkFake, 'POST', '/api/v3/tts/unidirectional').at(-1)!.json.req_params.audio_params.format).toBe('ogg_opus');
  });

  it('turns an error line before any audio into a 400', async () => {
    rig.arkFake.speechChunks = [];
    rig.arkFake.speechError = { code: 45000000, message: 'speaker permission denied' };
    try {
      await expect(speak({ model: 'doubao-tts', voice: 'zh_female_unknown_x_v1' })).rejects.toMatchObject({
        status: 400,
        message: expect.stringContaining('speaker permission denied'),
      });
    } finally {
      rig.arkFake.speechChunks = [Buffer.from('audio-1;'), Buffer.from('audio-2;'), Buffer.from('audio-3')];
      rig.arkFake.speechError = undefined;
    }
  });
});

describe('speech: bounded work (security review 5)', () => {
  it('an input over 4,096 characters is a 400 naming input, for every provider, and never reaches the upstream', async () => {
    const before = requestsTo(rig.openaiFake, 'POST', '/v1/audio/speech').length;
    for (const model of ['local-speech', 'oai-speech', 'doubao-tts']) {
      const error = await speak({ model, input: 'a'.repeat(4097) }).catch((caught: unknown) => caught);
      expect(error).toMatchObject({ status: 400, param: 'input' });
      expect((error as Error).message).toContain('at most 4096 characters');
    }
    expect(requestsTo(rig.openaiFake, 'POST', '/v1/audio/speech')).toHaveLength(before);
    const { bytes } = await speak({ input: `${'abcdefghijkl '.repeat(315)}a`.padEnd(4096, 'b'), response_format: 'wav', speed: 2 });
    expect(parseWav(bytes).declaredDataBytes).toBe(bytes.length - 44);
  });

  it('a WAV the header could not describe (over 4 GiB) is a 400 naming input, before any audio', async () => {
    const { localSpeech } = await import('../../src/providers/local/local-speech.js');
    // Past the schema's cap (a provider called directly): 1 MiB of words is a day of audio.
    const request = { model: 'local-speech', voice: 'en_female_anna_v1', input: 'a '.repeat(524_288), response_format: 'wav' as const };
    expect(() => localSpeech(request, new AbortController().signal)).toThrow(expect.objectContaining({ status: 400, param: 'input' }));
  });

  it('the local model renders word by word and lets the loop turn between words', async () => {
    const { localSpeech } = await import('../../src/providers/local/local-speech.js');
    const words = 40;
    const request = { model: 'local-speech', voice: 'en_female_anna_v1', input: 'word '.repeat(words), response_format: 'wav' as const };
    let chunks = 0;
    const turns = await loopTurnsDuring(async () => {
      for await (const _ of localSpeech(request, new AbortController().signal)) chunks++;
    });
    expect(chunks).toBe(words + 1);
    expect(turns).toBeGreaterThanOrEqual(words - 1);
  });
});
