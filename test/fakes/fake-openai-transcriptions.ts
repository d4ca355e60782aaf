import type { ServerResponse } from 'node:http';
import { sendJson, type MediaRequest, type RecordedPart } from './media-server.js';

/** What the fake transcribes any audio to. */
export const FAKE_TRANSCRIPT = 'The quick brown fox jumps over the lazy dog.';
/** The audio's length the fake reports, in seconds. */
export const FAKE_DURATION = 2.5;

/** Set to cut the next transcription stream after its first event (the socket destroyed, no `done`). */
export const transcriptionFaults = { cutNextStream: false };

/** Transcription models of the fake: `whisper-1` takes every format and ignores `stream`; the gpt-4o ones answer JSON or stream. */
const MODELS: Record<string, { formats: readonly string[]; streams: boolean }> = {
  'whisper-1': { formats: ['json', 'text', 'srt', 'verbose_json', 'vtt'], streams: false },
  'gpt-4o-transcribe': { formats: ['json'], streams: true },
  'gpt-4o-mini-transcribe': { formats: ['json'], streams: true },
  'gpt-4o-transcribe-diarize': { formats: ['json', 'text', 'diarized_json'], streams: true },
};

const FIELDS =
  /^(model|language|prompt|response_format|temperature|stream|timestamp_granularities\[\]|include\[\]|chunking_strategy(\[\w+\])?|known_speaker_names\[\]|known_speaker_references\[\])$/;
const AUDIO_EXTENSIONS = ['flac', 'm4a', 'mp3', 'mp4', 'mpeg', 'mpga', 'oga', 'ogg', 'wav', 'webm'];

interface Refusal {
  status: number;
  message: string;
  param?: string;
  code?: string;
}

/**
 * The fake's `POST /v1/audio/transcriptions`, as strict as OpenAI's: the bearer key, a
 * multipart body with one `file` of an audio extension, a known model, no field OpenAI does not
 * take, each format only on the models that have it, `timestamp_granularities[]` only with
 * `verbose_json`. It answers `FAKE_TRANSCRIPT` in the format asked, and with `stream=true` on a
 * gpt-4o model `transcript.text.delta` events and `transcript.text.done` with token usage.
 */
export function answerTranscription(request: MediaRequest, response: ServerResponse, apiKey: string): void {
  const refusal = refusalOf(request, apiKey);
  if (refusal) {
    const { status, message, param = null, code = null } = refusal;
    sendJson(response, { error: { message, type: 'invalid_request_error', param, code } }, status);
    return;
  }
  const field = (name: string) => textOf(request.parts!, name);
  const model = field('model')!;
  const format = field('response_format') ?? 'json';
  const usage = { type: 'tokens', input_tokens: 25, input_token_details: { text_tokens: 0, audio_tokens: 25 }, output_tokens: 11, total_tokens: 36 };
  if (field('stream') === 'true' && MODELS[model]!.streams) {
    response.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
    if (transcriptionFaults.cutNextStream) {
      transcriptionFaults.cutNextStream = false;
      response.write(`data: ${JSON.stringify({ type: 'transcript.text.delta', delta: 'The' })}\n\n`, () => response.socket?.destroy());
      return;
    }
    for (const delta of FAKE_TRANSCRIPT.match(/\s*\S+/g)!) response.write(`data: ${JSON.stringify({ type: 'transcript.text.delta', delta })}\n\n`);
    response.end(`data: ${JSON.stringify({ type: 'transcript.text.done', text: FAKE_TRANSCRIPT, usage })}\n\n`);
    return;
  }
  const segments = [
    { text: 'The quick brown fox', start: 0, end: 1.2 },
    { text: 'jumps over the lazy dog.', start: 1.2, end: FAKE_DURATION },
  ];
  const time = (seconds: number, separator: string) => `00:00:0${seconds.toFixed(3).replace('.', separator)}`;
  const plain: Record<string, () => string> = {
    text: () => `${FAKE_TRANSCRIPT}\n`,
    srt: () => segments.map((s, i) => `${i + 1}\n${time(s.start, ',')} --> ${time(s.end, ',')}\n${s.text}\n\n`).join(''),
    vtt: () => `WEBVTT\n\n${segments.map((s) => `${time(s.start, '.')} --> ${time(s.end, '.')}\n${s.text}\n\n`).join('')}`,
  };
  if (plain[format]) {
    response.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
    response.end(plain[format]());
    return;
  }
  if (format === 'diarized_json') {
    sendJson(response, {
      task: 'transcribe',
      duration: FAKE_DURATION,
      text: FAKE_TRANSCRIPT,
      segments: segments.map((s, id) => ({ type: 'transcript.text.segment', id: `seg_${id}`, ...s, speaker: id === 0 ? 'A' : 'B' })),
      usage,
    });
    return;
  }
  if (format === 'verbose_json') {
    const granularities = allOf(request.parts!, 'timestamp_granularities[]');
    const words = FAKE_TRANSCRIPT.replace(/\./g, '')
      .split(' ')
      .map((word, index) => ({ word, start: index * 0.25, end: index * 0.25 + 0.2 }));
    sendJson(response, {
      task: 'transcribe',
      language: 'english',
      duration: FAKE_DURATION,
      text: FAKE_TRANSCRIPT,
      ...(granularities.includes('word') ? { words } : {}),
      ...(granularities.length === 0 || granularities.includes('segment')
        ? {
            segments: segments.map((s, id) => ({
              id,
              seek: 0,
              ...s,
              tokens: [1, 2],
              temperature: 0,
              avg_logprob: -0.2,
              compression_ratio: 1.1,
              no_speech_prob: 0.01,
            })),
          }
        : {}),
      usage: { type: 'duration', seconds: Math.ceil(FAKE_DURATION) },
    });
    return;
  }
  sendJson(response, { text: FAKE_TRANSCRIPT, usage: model === 'whisper-1' ? { type: 'duration', seconds: Math.ceil(FAKE_DURATION) } : usage });
}

/** What OpenAI would refuse in the request, if anything. */
function refusalOf(request: MediaRequest, apiKey: string): Refusal | undefined {
  if (request.headers.authorization !== `Bearer ${apiKey}`) return { status: 401, message: 'Incorrect API key provided.', code: 'invalid_api_key' };
  const parts = request.parts;
  if (!parts) return { status: 400, message: 'Content-Type must be multipart/form-data.' };
  const files = parts.filter((part) => part.data !== undefined);
  const unknown = parts.find((part) => part.data === undefined && !FIELDS.test(part.name));
  if (unknown) return { status: 400, message: `Unrecognized request argument supplied: ${unknown.name}` };
  if (files.length !== 1 || files[0]!.name !== 'file') return { status: 400, message: "Missing required parameter: 'file'.", param: 'file' };
  const extension = /\.([a-z0-9]+)$/i.exec(files[0]!.filename ?? '')?.[1]?.toLowerCase();
  if (!extension || !AUDIO_EXTENSIONS.includes(extension)) {
    return { status: 400, message: `Invalid file format. Supported formats: ${JSON.stringify(AUDIO_EXTENSIONS)}`, param: 'file' };
  }
  const model = textOf(parts, 'model');
  if (!model) return { status: 400, message: "Missing required parameter: 'model'.", param: 'model' };
  const known = MODELS[model];
  if (!known) return { status: 404, message: `The model \`${model}\` does not exist or you do not have access to it.`, code: 'model_not_found' };
  const format = textOf(parts, 'response_format') ?? 'json';
  if (!known.formats.includes(format)) {
    return {
      status: 400,
      message: `response_format '${format}' is not compatible with model '${model}'. Use 'json' instead.`,
      param: 'response_format',
      code: 'unsupported_value',
    };
  }
  if (allOf(parts, 'timestamp_granularities[]').length > 0 && format !== 'verbose_json') {
    return { status: 400, message: 'timestamp_granularities requires response_format=verbose_json', param: 'timestamp_granularities' };
  }
  return undefined;
}

function textOf(parts: readonly RecordedPart[], name: string): string | undefined {
  return parts.findLast((part) => part.name === name && part.data === undefined)?.value;
}

function allOf(parts: readonly RecordedPart[], name: string): string[] {
  return parts.filter((part) => part.name === name && part.data === undefined).map((part) => part.value!);
}
