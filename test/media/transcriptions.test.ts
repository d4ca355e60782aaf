import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGateway, type UsageEvent } from '../../src/index.js';
import { createLocalProvider, localModels } from '../../src/providers/local/local-provider.js';
import { createOpenAIProvider } from '../../src/providers/openai/openai-provider.js';
import { requestsTo, startFakeOpenAIMedia, type FakeOpenAIMedia } from '../fakes/fake-openai-media.js';
import { FAKE_DURATION, FAKE_TRANSCRIPT, transcriptionFaults } from '../fakes/fake-openai-transcriptions.js';
import type { Served } from '../helpers/serve.js';
import { served } from './helpers.js';

const KEY = 'sk-transcribe-test';
const CHAT_ONLY_KEY = 'sk-transcribe-chat-only';
const UPLOAD_LIMIT = 2 * 1024 * 1024;

/** Two sentences: 9 words, the longest 8 letters, a comma that is no sentence end. */
const INPUT = 'Hello there. This is the local voice, speaking slowly.';
const LETTERS = [5, 5, 4, 2, 3, 5, 5, 8, 6];
const SENTENCE_ENDS = [1, 8];

let openaiFake: FakeOpenAIMedia;
let server: Served;
let client: OpenAI;
let dispose: () => Promise<void>;
const events: UsageEvent[] = [];

beforeAll(async () => {
  openaiFake = await startFakeOpenAIMedia();
  const gateway = createGateway({
    keys: [
      { key: KEY, id: 'key_transcribe' },
      { key: CHAT_ONLY_KEY, id: 'key_chat', models: ['local-chat', 'local-speech'] },
    ],
    providers: {
      local: createLocalProvider(),
      oai: createOpenAIProvider({ baseURL: openaiFake.baseURL, apiKey: 'sk-upstream-openai' }),
      custom: {
        type: 'custom',
        // The flat provider shape: `transcribe` is the transcription capability.
        transcribe: async (request) => ({ type: 'transcript', text: `custom heard ${request.file.data.length} bytes`, duration: 1.5 }),
      },
    },
    models: [
      ...localModels('local'),
      { id: 'oai-transcribe', provider: 'oai', upstreamModel: 'gpt-4o-transcribe', kind: 'transcription' },
      { id: 'oai-whisper', provider: 'oai', upstreamModel: 'whisper-1', kind: 'transcription' },
      { id: 'oai-diarize', provider: 'oai', upstreamModel: 'gpt-4o-transcribe-diarize', kind: 'transcription' },
      { id: 'custom-transcribe', provider: 'custom', kind: 'transcription' },
      {
        id: 'transcribe-fallback',
        kind: 'transcription',
        deployments: [
          { provider: 'oai', upstreamModel: 'whisper-1', weight: 1e9, id: 'oai-first' },
          { provider: 'local', upstreamModel: 'local-transcription', weight: 1, id: 'local-second' },
        ],
      },
    ],
    limits: { uploadFileBytes: UPLOAD_LIMIT },
    hooks: { onUsage: (event) => void events.push(event) },
    logger: false,
  });
  ({ server, client, close: dispose } = await served(gateway, KEY));
});

afterAll(async () => {
  await dispose();
  await openaiFake.close();
});

/** The usage event of the last request (hooks run just after the answer). */
async function lastEvent(): Promise<UsageEvent> {
  await new Promise((resolve) => setImmediate(resolve));
  return events.at(-1)!;
}

const EXTENSIONS = { wav: 'wav', mp3: 'mp3', opus: 'ogg' } as const;

/** Audio from the local speech model, as an upload. */
async function spoken(format: 'wav' | 'mp3' | 'opus', options: { input?: string; voice?: string; speed?: number } = {}) {
  const response = await client.audio.speech.create({
    model: 'local-speech',
    voice: options.voice ?? 'en_female_anna_v1',
    input: options.input ?? INPUT,
    response_format: format,
    ...(options.speed ? { speed: options.speed } : {}),
  } as OpenAI.Audio.SpeechCreateParams);
  const bytes = Buffer.from(await response.arrayBuffer());
  return { bytes, file: await toFile(bytes, `speech.${EXTENSIONS[format]}`) };
}

/** Where the speech model put each word, in seconds at speed 1 (see local-speech.ts). */
function plannedWords(): { start: number; end: number }[] {
  let at = 0;
  return LETTERS.map((letters, index) => {
    const start = at;
    const end = start + 0.06 + 0.055 * letters;
    at = end + (SENTENCE_ENDS.includes(index) ? 0.25 : 0.07);
    return { start, end };
  });
}

/** A raw multipart POST, for what the SDK would not send. */
async function postForm(form: FormData, key = KEY): Promise<{ status: number; json: any }> {
  const response = await fetch(`${server.url}/v1/audio/transcriptions`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
  return { status: response.status, json: await response.json() };
}

describe('transcriptions: speech → transcription round trip on the local models', () => {
  it.each(['wav', 'mp3', 'opus'] as const)('%s: the words, their letters, sentences and timings come back', async (format) => {
    const { file } = await spoken(format);
    const answer = await client.audio.transcriptions.create({
      model: 'local-transcription',
      file,
      response_format: 'verbose_json',
      timestamp_granularities: ['word', 'segment'],
    });
    expect(answer.text).toBe('Lalal lalal. Lala la lal lalal lalal lalalala lalala.');
    expect((answer as unknown as { task: string }).task).toBe('transcribe');
    expect(answer.language).toBe('english');
    const words = answer.words!;
    expect(words.map((word) => word.word.length)).toEqual(LETTERS);
    // MP3 starts later by the encoder's delay; WAV and Opus (pre-skip removed) start where the words were written.
    const offset = format === 'mp3' ? words[0]!.start : 0;
    expect(offset).toBeLessThan(0.1);
    for (const [index, planned] of plannedWords().entries()) {
      expect(words[index]!.start - offset).toBeCloseTo(planned.start, 1);
      expect(words[index]!.end - words[index]!.start).toBeCloseTo(planned.end - planned.start, 1);
      expect(Math.abs(words[index]!.end - words[index]!.start - (planned.end - planned.start))).toBeLessThan(0.012);
    }
    expect(answer.segments!.map((segment) => segment.text)).toEqual(['Lalal lalal.', 'Lala la lal lalal lalal lalalala lalala.']);
    expect(answer.segments![0]).toMatchObject({ id: 0, start: words[0]!.start, end: words[1]!.end });
    expect(answer.segments![1]).toMatchObject({ id: 1, start: words[2]!.start, end: words[8]!.end });
    expect(answer.duration).toBeGreaterThan(words[8]!.end);
    expect(answer.duration).toBeLessThan(words[8]!.end + 0.4);
    expect(answer.usage).toEqual({ type: 'duration', seconds: Math.ceil(answer.duration) });
    expect(await lastEvent()).toMatchObject({
      endpoint: '/v1/audio/transcriptions',
      kind: 'transcription',
      model: 'local-transcription',
      status: 'ok',
      units: { audioSeconds: answer.duration },
    });
  });

  it('pitch gives the voice family, pauses the speed: male and neutral voices, fast and slow speech', async () => {
    const cases = [
      { voice: 'en_male_bob_v1', speed: 2, text: 'Dudud dudud. Dudu du dud dudud dudud dudududu dududu.' },
      { voice: 'en_robot_zed_v1', speed: 0.5, text: 'Nanan nanan. Nana na nan nanan nanan nananana nanana.' },
    ];
    for (const { voice, speed, text } of cases) {
      const { file } = await spoken('wav', { voice, speed });
      const answer = await client.audio.transcriptions.create({ model: 'local-transcription', file, response_format: 'json' });
      expect(answer.text).toBe(text);
    }
  });

  it('json (token usage), text, srt and vtt; the same audio gives the same transcript', async () => {
    const { bytes } = await spoken('wav');
    const file = () => toFile(bytes, 'speech.wav');
    const json = await client.audio.transcriptions.create({ model: 'local-transcription', file: await file() });
    expect(json.text).toBe('Lalal lalal. Lala la lal lalal lalal lalalala lalala.');
    expect(json.usage).toMatchObject({ type: 'tokens', output_tokens: Math.ceil(json.text.length / 4), input_token_details: { text_tokens: 0 } });
    expect(await lastEvent()).toMatchObject({ status: 'ok', usage: { input: (json.usage as { input_tokens: number }).input_tokens, output: 14 } });
    const again = await client.audio.transcriptions.create({ model: 'local-transcription', file: await file() });
    expect(again.text).toBe(json.text);

    const text = await client.audio.transcriptions.create({ model: 'local-transcription', file: await file(), response_format: 'text' });
    expect(text).toBe(`${json.text}\n`);

    const srt = await client.audio.transcriptions.create({ model: 'local-transcription', file: await file(), response_format: 'srt' });
    expect(srt).toMatch(
      /^1\n00:00:00,0\d\d --> 00:00:00,[67]\d\d\nLalal lalal\.\n\n2\n00:00:0\d,\d{3} --> 00:00:0\d,\d{3}\nLala la lal lalal lalal lalalala lalala\.\n\n$/,
    );

    const response = await fetch(`${server.url}/v1/audio/transcriptions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}` },
      body: formWith({ model: 'local-transcription', response_format: 'vtt' }, bytes, 'speech.wav'),
    });
    expect(response.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(await response.text()).toMatch(/^WEBVTT\n\n00:00:00\.0\d\d --> 00:00:00\.[67]\d\d\nLalal lalal\.\n\n00:00:0\d\.\d{3} --> /);
  });

  it('stream: true gives transcript.text.delta per word and transcript.text.done with usage, through the SDK', async () => {
    const { file } = await spoken('opus');
    const stream = await client.audio.transcriptions.create({ model: 'local-transcription', file, stream: true });
    const deltas: string[] = [];
    let done: OpenAI.Audio.TranscriptionTextDoneEvent | undefined;
    for await (const event of stream) {
      if (event.type === 'transcript.text.delta') deltas.push(event.delta);
      if (event.type === 'transcript.text.done') done = event;
    }
    expect(deltas).toHaveLength(9);
    expect(deltas.join('')).toBe('Lalal lalal. Lala la lal lalal lalal lalalala lalala.');
    expect(done).toMatchObject({ text: deltas.join(''), usage: { type: 'tokens', output_tokens: 14 } });
    expect(await lastEvent()).toMatchObject({ stream: true, status: 'ok', usage: { output: 14 }, units: { audioSeconds: expect.any(Number) } });
  });

  it('diarized_json: the sentences as segments of one speaker', async () => {
    const { file } = await spoken('wav');
    const answer = (await client.audio.transcriptions.create({
      model: 'local-transcription',
      file,
      response_format: 'diarized_json',
    })) as unknown as OpenAI.Audio.TranscriptionDiarized;
    expect(answer).toMatchObject({ task: 'transcribe', text: 'Lalal lalal. Lala la lal lalal lalal lalalala lalala.' });
    expect(answer.segments.map(({ type, id, speaker, text }) => ({ type, id, speaker, text }))).toEqual([
      { type: 'transcript.text.segment', id: 'seg_0', speaker: 'A', text: 'Lalal lalal.' },
      { type: 'transcript.text.segment', id: 'seg_1', speaker: 'A', text: 'Lala la lal lalal lalal lalalala lalala.' },
    ]);
    expect(answer.segments[1]!.start).toBeGreaterThan(answer.segments[0]!.end);
  });

  it('a custom provider of the flat shape (transcribe) is formatted like the local model', async () => {
    const answer = await client.audio.transcriptions.create({
      model: 'custom-transcribe',
      file: await toFile(Buffer.from('abc'), 'a.wav'),
      response_format: 'verbose_json',
    });
    expect(answer).toMatchObject({ text: 'custom heard 3 bytes', duration: 1.5, segments: [{ id: 0, start: 0, end: 1.5, text: 'custom heard 3 bytes' }] });
  });
});

/** A multipart form of text fields and one audio file. */
function formWith(fields: Record<string, string | string[]>, bytes: Uint8Array | undefined, filename = 'a.wav'): FormData {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) for (const item of [value].flat()) form.append(name, item);
  if (bytes) form.append('file', new Blob([Buffer.from(bytes)]), filename);
  return form;
}

describe('transcriptions: the openai upstream (strict fake)', () => {
  it('every field and the file reach the upstream as sent, model mapped; each format comes back as the upstream wrote it', async () => {
    const { bytes } = await spoken('mp3');
    const verbose = await client.audio.transcriptions.create({
      model: 'oai-whisper',
      file: await toFile(bytes, 'speech.mp3', { type: 'audio/mpeg' }),
      response_format: 'verbose_json',
      timestamp_granularities: ['word', 'segment'],
      language: 'en',
      prompt: 'A fox.',
      temperature: 0.2,
    });
    expect(verbose).toMatchObject({ task: 'transcribe', text: FAKE_TRANSCRIPT, duration: FAKE_DURATION, language: 'english' });
    expect(verbose.words).toHaveLength(9);
    expect(verbose.segments).toHaveLength(2);
    const received = requestsTo(openaiFake, 'POST', '/v1/audio/transcriptions').at(-1)!;
    expect(received.headers.authorization).toBe('Bearer sk-upstream-openai');
    const file = received.parts!.find((part) => part.name === 'file')!;
    expect(file).toMatchObject({ filename: 'speech.mp3', contentType: 'audio/mpeg' });
    expect(file.data!.equals(bytes)).toBe(true);
    const fields = received.parts!.filter((part) => part.data === undefined).map((part) => [part.name, part.value]);
    expect(fields).toEqual(
      expect.arrayContaining([
        ['model', 'whisper-1'],
        ['response_format', 'verbose_json'],
        ['timestamp_granularities[]', 'word'],
        ['timestamp_granularities[]', 'segment'],
        ['language', 'en'],
        ['prompt', 'A fox.'],
        ['temperature', '0.2'],
      ]),
    );
    expect(fields).toHaveLength(7);
    expect(await lastEvent()).toMatchObject({ model: 'oai-whisper', upstreamModel: 'whisper-1', status: 'ok', units: { audioSeconds: FAKE_DURATION } });

    const file2 = () => toFile(bytes, 'speech.mp3');
    expect(await client.audio.transcriptions.create({ model: 'oai-whisper', file: await file2(), response_format: 'text' })).toBe(`${FAKE_TRANSCRIPT}\n`);
    expect(await client.audio.transcriptions.create({ model: 'oai-whisper', file: await file2(), response_format: 'srt' })).toBe(
      '1\n00:00:00,000 --> 00:00:01,200\nThe quick brown fox\n\n2\n00:00:01,200 --> 00:00:02,500\njumps over the lazy dog.\n\n',
    );
    expect(await client.audio.transcriptions.create({ model: 'oai-whisper', file: await file2(), response_format: 'vtt' })).toMatch(
      /^WEBVTT\n\n00:00:00\.000 --> 00:00:01\.200\nThe quick brown fox\n/,
    );
    const json = await client.audio.transcriptions.create({ model: 'oai-whisper', file: await file2() });
    expect(json).toEqual({ text: FAKE_TRANSCRIPT, usage: { type: 'duration', seconds: 3 } });
  });

  it('gpt-4o-transcribe: json with token usage, include[] and chunking_strategy[…] passed on, the stream passed through', async () => {
    const { bytes } = await spoken('wav');
    const json = await client.audio.transcriptions.create({
      model: 'oai-transcribe',
      file: await toFile(bytes, 'speech.wav'),
      include: ['logprobs'],
      chunking_strategy: { type: 'server_vad', silence_duration_ms: 500, threshold: 0.4 },
    });
    expect(json).toMatchObject({ text: FAKE_TRANSCRIPT, usage: { type: 'tokens', input_tokens: 25, output_tokens: 11 } });
    const fields = requestsTo(openaiFake, 'POST', '/v1/audio/transcriptions')
      .at(-1)!
      .parts!.filter((part) => part.data === undefined)
      .map((part) => [part.name, part.value]);
    expect(fields).toEqual(
      expect.arrayContaining([
        ['model', 'gpt-4o-transcribe'],
        ['include[]', 'logprobs'],
        ['chunking_strategy[type]', 'server_vad'],
        ['chunking_strategy[silence_duration_ms]', '500'],
        ['chunking_strategy[threshold]', '0.4'],
      ]),
    );
    expect(await lastEvent()).toMatchObject({ model: 'oai-transcribe', status: 'ok', usage: { input: 25, output: 11 } });

    const stream = await client.audio.transcriptions.create({ model: 'oai-transcribe', file: await toFile(bytes, 'speech.wav'), stream: true });
    const seen: OpenAI.Audio.TranscriptionStreamEvent[] = [];
    for await (const event of stream) seen.push(event);
    expect(seen.at(-1)).toEqual({
      type: 'transcript.text.done',
      text: FAKE_TRANSCRIPT,
      usage: { type: 'tokens', input_tokens: 25, input_token_details: { text_tokens: 0, audio_tokens: 25 }, output_tokens: 11, total_tokens: 36 },
    });
    expect(
      seen
        .filter((event) => event.type === 'transcript.text.delta')
        .map((event) => event.delta)
        .join(''),
    ).toBe(FAKE_TRANSCRIPT);
    expect(await lastEvent()).toMatchObject({ stream: true, status: 'ok', usage: { input: 25, output: 11 } });
  });

  it('gpt-4o-transcribe-diarize: diarized_json, and the known speakers passed on', async () => {
    const answer = (await client.audio.transcriptions.create({
      model: 'oai-diarize',
      file: await toFile(Buffer.from('RIFF'), 'a.wav'),
      response_format: 'diarized_json',
      known_speaker_names: ['agent', 'customer'],
      known_speaker_references: ['data:audio/wav;base64,AAAA', 'data:audio/wav;base64,BBBB'],
    })) as unknown as OpenAI.Audio.TranscriptionDiarized;
    expect(answer.segments.map((segment) => segment.speaker)).toEqual(['A', 'B']);
    const fields = requestsTo(openaiFake, 'POST', '/v1/audio/transcriptions')
      .at(-1)!
      .parts!.filter((part) => part.data === undefined)
      .map((part) => [part.name, part.value]);
    expect(fields).toEqual([
      ['model', 'gpt-4o-transcribe-diarize'],
      ['response_format', 'diarized_json'],
      ['known_speaker_names[]', 'agent'],
      ['known_speaker_names[]', 'customer'],
      ['known_speaker_references[]', 'data:audio/wav;base64,AAAA'],
      ['known_speaker_references[]', 'data:audio/wav;base64,BBBB'],
    ]);
  });

  it('a stream the upstream cuts ends with an error event the SDK throws, never as a clean end', async () => {
    transcriptionFaults.cutNextStream = true;
    const stream = await client.audio.transcriptions.create({ model: 'oai-transcribe', file: await toFile(Buffer.from('RIFF'), 'a.wav'), stream: true });
    const deltas: string[] = [];
    const error = await (async () => {
      for await (const event of stream) if (event.type === 'transcript.text.delta') deltas.push(event.delta);
    })().catch((caught: unknown) => caught);
    expect(deltas).toEqual(['The']);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(await lastEvent()).toMatchObject({ model: 'oai-transcribe', stream: true, status: 'error', error: { status: 502 } });
  });

  it('an upstream that fails before answering falls back to the next deployment', async () => {
    const { bytes } = await spoken('wav');
    openaiFake.failNext = { status: 503, body: { error: { message: 'The server is overloaded.', type: 'server_error' } } };
    const answer = await client.audio.transcriptions.create({ model: 'transcribe-fallback', file: await toFile(bytes, 'speech.wav') });
    expect(answer.text).toBe('Lalal lalal. Lala la lal lalal lalal lalalala lalala.');
    expect(await lastEvent()).toMatchObject({ model: 'transcribe-fallback', deployment: 'local-second', attempts: 2, status: 'ok' });
  });

  it('an upstream 429 reaches the client as a 429', async () => {
    openaiFake.failNext = { status: 429, body: { error: { message: 'Rate limit reached for requests', type: 'requests', code: 'rate_limit_exceeded' } } };
    const error = await client.audio.transcriptions
      .create({ model: 'oai-whisper', file: await toFile(Buffer.from('RIFF'), 'a.wav') })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
  });

  it('an upstream refusal keeps its status and names the field', async () => {
    const error = await client.audio.transcriptions
      .create({ model: 'oai-transcribe', file: await toFile(Buffer.from('RIFF'), 'a.wav'), response_format: 'srt' })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('response_format');
    expect(await lastEvent()).toMatchObject({ model: 'oai-transcribe', status: 'error', error: { status: 400 } });
  });
});

describe('transcriptions: refused requests (400, 403, 413 naming the field)', () => {
  const refusals: { name: string; fields: Record<string, string | string[]>; file?: Uint8Array; status: number; param: string | null; code?: string }[] = [
    { name: 'no file', fields: { model: 'local-transcription' }, status: 400, param: 'file', code: 'missing_required_parameter' },
    { name: 'an empty file', fields: { model: 'local-transcription' }, file: new Uint8Array(0), status: 400, param: 'file' },
    { name: 'no model', fields: {}, file: new Uint8Array(4), status: 400, param: 'model', code: 'missing_required_parameter' },
    {
      name: 'an unknown response_format',
      fields: { model: 'local-transcription', response_format: 'xml' },
      file: new Uint8Array(4),
      status: 400,
      param: 'response_format',
    },
    { name: 'a temperature above 1', fields: { model: 'local-transcription', temperature: '1.5' }, file: new Uint8Array(4), status: 400, param: 'temperature' },
    { name: 'stream that is no boolean', fields: { model: 'local-transcription', stream: 'yes' }, file: new Uint8Array(4), status: 400, param: 'stream' },
    {
      name: 'an unknown granularity',
      fields: { model: 'local-transcription', response_format: 'verbose_json', 'timestamp_granularities[]': ['word', 'letter'] },
      file: new Uint8Array(4),
      status: 400,
      param: 'timestamp_granularities[1]',
    },
    {
      name: 'timestamps without verbose_json',
      fields: { model: 'local-transcription', 'timestamp_granularities[]': 'word' },
      file: new Uint8Array(4),
      status: 400,
      param: 'timestamp_granularities',
    },
    {
      name: 'logprobs with text',
      fields: { model: 'local-transcription', response_format: 'text', 'include[]': 'logprobs' },
      file: new Uint8Array(4),
      status: 400,
      param: 'include',
    },
    {
      name: 'a chunking strategy of another type',
      fields: { model: 'local-transcription', 'chunking_strategy[type]': 'client_vad' },
      file: new Uint8Array(4),
      status: 400,
      param: 'chunking_strategy.type',
    },
    { name: 'a speech model', fields: { model: 'local-speech' }, file: new Uint8Array(4), status: 400, param: 'model' },
    { name: 'an unknown model', fields: { model: 'nope' }, file: new Uint8Array(4), status: 404, param: 'model' },
    { name: 'audio the local model cannot decode', fields: { model: 'local-transcription' }, file: new Uint8Array(64).fill(7), status: 400, param: 'file' },
    {
      name: 'a file over the upload limit',
      fields: { model: 'local-transcription' },
      file: new Uint8Array(UPLOAD_LIMIT + 1),
      status: 413,
      param: 'file',
      code: 'request_too_large',
    },
  ];

  it.each(refusals)('$name → $status naming $param', async ({ fields, file, status, param, code }) => {
    const { status: got, json } = await postForm(formWith(fields, file));
    expect(got).toBe(status);
    expect(json.error).toMatchObject({ param, ...(code ? { code } : {}) });
    expect(typeof json.error.message).toBe('string');
  });

  it('more files than limits.uploadFiles → 413 naming file', async () => {
    const form = formWith({ model: 'local-transcription' }, new Uint8Array(4));
    for (let i = 0; i < 16; i++) form.append('file', new Blob([Buffer.from('RIFF')]), `${i}.wav`);
    const { status, json } = await postForm(form);
    expect(status).toBe(413);
    expect(json.error).toMatchObject({ param: 'file', code: 'request_too_large' });
  });

  it('a key without the model in its scope gets a 404, as for an unknown model, through the SDK', async () => {
    const scoped = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: CHAT_ONLY_KEY, maxRetries: 0 });
    const error = await scoped.audio.transcriptions
      .create({ model: 'local-transcription', file: await toFile(Buffer.from('RIFF'), 'a.wav') })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
  });

  it('a JSON body is refused as no multipart form', async () => {
    const response = await fetch(`${server.url}/v1/audio/transcriptions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'local-transcription' }),
    });
    expect(response.status).toBe(400);
    expect((await response.json()).error.code).toBe('invalid_content_type');
  });

  it('/v1/models lists the transcription models with their endpoint type', async () => {
    const models = await client.models.list();
    const local = models.data.find((model) => model.id === 'local-transcription') as unknown as { supported_endpoint_types: string[] };
    expect(local.supported_endpoint_types).toEqual(['openai-audio-transcription']);
  });
});
