import { parseJson } from '../../json.js';
import { multipartBody, type MultipartPart } from '../http/multipart-body.js';
import { readText, type UpstreamClient, type UpstreamResult } from '../http/upstream-client.js';
import { errorInAnswer, upstreamError } from '../http/upstream-error.js';
import type { TranscriptionCapability } from '../provider.js';
import { mediaStreamEvents } from './media-stream-events.js';

/** Largest transcription answer read: hours of audio as verbose JSON with word timings stay far below. */
const MAX_ANSWER_BYTES = 32 * 1024 * 1024;

/**
 * OpenAI's `POST /audio/transcriptions` (multipart): the client's text fields go on as they
 * came, in order and under their own names (`timestamp_granularities[]`, `chunking_strategy[type]`),
 * only `model` mapped, and the audio as the chunks it was uploaded in (no joined copy). The
 * answer comes back in the format asked for, as the upstream wrote it; with `stream: true` its
 * events are passed on (a model that ignores `stream`, as `whisper-1` does, answers whole).
 */
export function openAITranscriptions(client: UpstreamClient): TranscriptionCapability {
  return {
    async transcribe({ fields, form, file }, call) {
      const parts: MultipartPart[] = [
        { name: 'file', value: { data: file.chunks ?? file.data, filename: file.filename, contentType: file.mimeType || 'application/octet-stream' } },
        ...form.map(([name, value]) => ({ name, value })),
      ];
      const { body, contentType } = multipartBody(parts);
      const stream = fields.stream === true;
      const result = await client.post('/audio/transcriptions', body, {
        signal: call.signal,
        idleTimeoutMs: call.idleTimeoutMs,
        upstreamWait: call.upstreamWait,
        contentType,
        headers: { accept: stream ? 'text/event-stream' : 'application/json, text/plain' },
      });
      if (result.status >= 400) throw await upstreamError(result);
      const type = headerOf(result, 'content-type');
      if (stream && /^\s*text\/event-stream/i.test(type)) return { type: 'stream', events: mediaStreamEvents(result, 'transcription') };
      const text = await readText(result.body, MAX_ANSWER_BYTES, result.upstreamWait);
      if (/json/i.test(type)) {
        const error = errorInAnswer(parseJson(text), result.redact);
        if (error) throw error;
      }
      return { type: 'body', contentType: type || 'application/json', text };
    },
  };
}

function headerOf(result: UpstreamResult, name: string): string {
  const value = result.headers[name];
  return (Array.isArray(value) ? value[0] : value) ?? '';
}
