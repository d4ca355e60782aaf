import type { Transcript, TranscriptionStreamEvent, TranscriptSegment } from '../providers/media.js';
import type { TranscriptionFields, TranscriptionFormat } from '../schemas/transcription.js';

/** What OpenAI answers `text`, `srt` and `vtt` with (subtitles included: not `text/vtt`). */
export const TRANSCRIPT_TEXT_TYPE = 'text/plain; charset=utf-8';

/**
 * A transcript in the format the client asked for, as OpenAI writes each: `json` is
 * `{ text, usage }`, `verbose_json` adds the task, language, duration and the segments and/or
 * words `timestamp_granularities` asked for (segments when it asked for none), `diarized_json`
 * the duration and segments with a speaker (one, `A`, for a transcript that names none), `text`
 * is the text and a newline, `srt` and `vtt` number or time each segment.
 */
export function formatTranscript(transcript: Transcript, fields: TranscriptionFields): { json: Record<string, unknown> } | { text: string } {
  const format: TranscriptionFormat = fields.response_format ?? 'json';
  const segments = transcript.segments ?? [{ text: transcript.text, start: 0, end: transcript.duration ?? 0 }];
  if (format === 'text') return { text: `${transcript.text}\n` };
  if (format === 'srt') return { text: subtitles(segments, ',', true) };
  if (format === 'vtt') return { text: `WEBVTT\n\n${subtitles(segments, '.', false)}` };
  const usage = transcript.usage ? { usage: transcript.usage } : {};
  if (format === 'json') return { json: { text: transcript.text, ...usage } };
  if (format === 'diarized_json') {
    return {
      json: {
        task: 'transcribe',
        duration: transcript.duration ?? segments.at(-1)?.end ?? 0,
        text: transcript.text,
        segments: segments.map((segment, index) => ({ type: 'transcript.text.segment', id: `seg_${index}`, ...segment, speaker: segment.speaker ?? 'A' })),
        ...usage,
      },
    };
  }
  const granularities = fields.timestamp_granularities?.length ? fields.timestamp_granularities : ['segment'];
  return {
    json: {
      task: 'transcribe',
      language: transcript.language ?? fields.language ?? 'english',
      duration: transcript.duration ?? segments.at(-1)?.end ?? 0,
      text: transcript.text,
      ...(granularities.includes('word') ? { words: transcript.words ?? [] } : {}),
      ...(granularities.includes('segment') ? { segments: segments.map(verboseSegment) } : {}),
      ...usage,
    },
  };
}

/**
 * OpenAI's verbose segment. The fields a model of our own has no value for are neutral: no
 * tokens, a certain log probability and speech present, as a confident decoder would report.
 */
function verboseSegment(segment: TranscriptSegment, id: number): Record<string, unknown> {
  return {
    id,
    seek: 0,
    start: segment.start,
    end: segment.end,
    text: segment.text,
    tokens: [],
    temperature: 0,
    avg_logprob: 0,
    compression_ratio: 1,
    no_speech_prob: 0,
  };
}

/** SRT (numbered, `00:00:01,500`) or WebVTT cues (`00:00:01.500`), a blank line after each. */
function subtitles(segments: readonly TranscriptSegment[], separator: ',' | '.', numbered: boolean): string {
  return segments
    .map((segment, index) => {
      const time = `${timestamp(segment.start, separator)} --> ${timestamp(segment.end, separator)}`;
      return `${numbered ? `${index + 1}\n` : ''}${time}\n${segment.text.trim()}\n\n`;
    })
    .join('');
}

function timestamp(seconds: number, separator: string): string {
  const ms = Math.max(0, Math.round(seconds * 1000));
  const pad = (value: number, width = 2) => String(value).padStart(width, '0');
  return `${pad(Math.floor(ms / 3_600_000))}:${pad(Math.floor(ms / 60_000) % 60)}:${pad(Math.floor(ms / 1000) % 60)}${separator}${pad(ms % 1000, 3)}`;
}

/**
 * A whole transcript as the events of a streamed one, as `gpt-4o-transcribe` sends them: a
 * `transcript.text.delta` per word (with the spaces before it), then `transcript.text.done` with the text and usage.
 */
export function* transcriptEvents(transcript: Transcript): Generator<TranscriptionStreamEvent> {
  // Pieces that join back into the text exactly: each word with the spaces before it.
  for (const delta of transcript.text.match(/\s*\S+/g) ?? []) yield { type: 'transcript.text.delta', delta };
  yield { type: 'transcript.text.done', text: transcript.text, ...(transcript.usage ? { usage: transcript.usage } : {}) };
}
