import { randomUUID } from 'node:crypto';
import { GatewayError, upstreamInvalidResponse, upstreamStreamCut } from '../../errors.js';
import { parseJson } from '../../json.js';
import { wavHeader } from '../codecs/wav.js';
import { upstreamChunks, type UpstreamClient } from '../http/upstream-client.js';
import { upstreamError } from '../http/upstream-error.js';
import type { SpeechRequest } from '../media.js';
import type { SpeechCapability } from '../provider.js';

/** Volcengine's TTS answers 24 kHz by default; PCM for `wav` is asked at this rate. */
const SAMPLE_RATE = 24_000;
/** `response_format` → Volcengine `audio_params.format` (`wav` is PCM behind our own header: their streamed WAV repeats headers). */
const FORMATS = { mp3: 'mp3', opus: 'ogg_opus', wav: 'pcm' } as const;
/** The line that ends a successful answer. */
const DONE = 20_000_000;

/**
 * Volcengine speech synthesis, HTTP streaming (`POST /api/v3/tts/unidirectional`): the model's
 * upstream id is the resource id (`seed-tts-1.0`, `seed-tts-2.0`…), `voice` the speaker
 * (`zh_female_cancan_mars_bigtts`), `speed` 0.5–2.0 → `speech_rate` −50…100, `instructions` →
 * `additions.context_texts`, `metadata` → further `req_params` fields. The answer is one JSON
 * object per line with a base64 audio chunk; each chunk is passed on as soon as its line is
 * complete.
 */
export function arkSpeech(client: UpstreamClient): SpeechCapability {
  return {
    async synthesize(request, call) {
      if (request.stream_format !== undefined && request.stream_format !== 'audio') {
        throw new GatewayError({
          status: 400,
          param: 'stream_format',
          code: 'unsupported_value',
          message: `This speech model streams raw audio only: 'stream_format' must be 'audio', received ${JSON.stringify(request.stream_format)}.`,
        });
      }
      const format = request.response_format ?? 'mp3';
      const result = await client.post('/api/v3/tts/unidirectional', JSON.stringify(ttsBody(request, FORMATS[format])), {
        signal: call.signal,
        idleTimeoutMs: call.idleTimeoutMs,
        upstreamWait: call.upstreamWait,
        headers: { 'x-api-resource-id': request.model, 'x-api-request-id': randomUUID() },
      });
      if (result.status >= 400) throw await upstreamError(result);
      const audio = audioChunks(upstreamChunks(result.body));
      return format === 'wav' ? withWavHeader(audio) : audio;
    },
  };
}

function ttsBody(request: SpeechRequest, format: string): Record<string, unknown> {
  const speed = request.speed ?? 1;
  return {
    user: { uid: 'infergate' },
    req_params: {
      ...request.metadata,
      text: request.input,
      speaker: request.voice,
      audio_params: { format, sample_rate: SAMPLE_RATE, speech_rate: speed === 1 ? undefined : Math.round((speed - 1) * 100) },
      ...(request.instructions ? { additions: JSON.stringify({ context_texts: [request.instructions] }) } : {}),
    },
  };
}

/** Decodes the NDJSON answer line by line: `{code: 0, data: base64}` chunks until `{code: 20000000}`. */
async function* audioChunks(body: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  const decoder = new TextDecoder();
  let buffered = '';
  let done = false;
  for await (const chunk of body) {
    buffered += decoder.decode(chunk, { stream: true });
    let newline: number;
    while ((newline = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, newline).trim();
      buffered = buffered.slice(newline + 1);
      if (!line) continue;
      const audio = readLine(line);
      if (audio === DONE) done = true;
      else if (audio) yield audio;
    }
  }
  const last = (buffered + decoder.decode()).trim();
  if (last) {
    const audio = readLine(last);
    if (audio === DONE) done = true;
    else if (audio) yield audio;
  }
  if (!done) throw upstreamStreamCut('The speech stream ended before the audio was complete.');
}

function readLine(line: string): Uint8Array | typeof DONE | undefined {
  const message = parseJson(line) as { code?: unknown; message?: unknown; data?: unknown } | undefined;
  if (message === undefined) throw upstreamInvalidResponse('The speech stream sent a line that is not JSON.');
  if (message.code === DONE) return DONE;
  if (message.code !== 0) {
    // Volcengine codes starting with 4 are the request's fault (bad speaker, text…).
    const status = /^4/.test(String(message.code)) ? 400 : 502;
    throw new GatewayError({
      status,
      message: typeof message.message === 'string' && message.message ? message.message : `Speech synthesis failed (code ${String(message.code)}).`,
      code: `upstream_${String(message.code)}`,
    });
  }
  return typeof message.data === 'string' && message.data ? Buffer.from(message.data, 'base64') : undefined;
}

/** PCM with a streaming WAV header in front, sent with the first audio so errors still get their status. */
async function* withWavHeader(pcm: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  let first = true;
  for await (const chunk of pcm) {
    if (first) yield Buffer.concat([wavHeader(SAMPLE_RATE, 1), chunk]);
    else yield chunk;
    first = false;
  }
  if (first) yield wavHeader(SAMPLE_RATE, 1, 0);
}
