import { toPublicError } from '../errors.js';
import { startIterable } from '../http/first-item.js';
import { jsonResponse, jsonTextResponse } from '../http/json-response.js';
import type { RouteContext } from '../http/route.js';
import { sseResponse } from '../http/sse-response.js';
import { isRecord, parseJson } from '../json.js';
import type { Logger } from '../logger.js';
import type { RequestLedger } from '../policy/request-ledger.js';
import type { IRUsage } from '../protocols/ir.js';
import type { TranscriptionOutput, TranscriptionStreamEvent } from '../providers/media.js';
import { checkTranscriptionFile, type TranscriptionFields, validateTranscriptionFields } from '../schemas/transcription.js';
import { runMediaCall, upstreamModel } from './media-call.js';
import { formatTranscript, TRANSCRIPT_TEXT_TYPE, transcriptEvents } from './transcript-formats.js';
import { readUploadForm } from './upload-form.js';

/**
 * POST /v1/audio/transcriptions (multipart): the audio as `file`, read within the upload limits
 * like image edits. The answer is in the format asked for (`json`, `verbose_json`, `text`, `srt`,
 * `vtt`), or with `stream: true` SSE `transcript.text.delta` events and a last
 * `transcript.text.done`, whichever the upstream is: a provider that hands back a transcript is
 * formatted here, one that answers in OpenAI's formats is passed on.
 */
export async function createTranscription(context: RouteContext): Promise<Response> {
  const { options, key } = context;
  // One audio file: a second file part stops the reading (413) instead of being read for nothing.
  const { entries, files } = await readUploadForm(context, { fileField: 'file', files: 1 });
  const fields = validateTranscriptionFields(entries);
  // The file as read (not spread: `data` would join its chunks, a copy for nothing).
  const file = checkTranscriptionFile(files);
  const model = options.catalog.resolve(key, fields.model, 'transcription', '/v1/audio/transcriptions');
  const stream = fields.stream === true;
  const media = { model, kind: 'transcription', endpoint: '/v1/audio/transcriptions', stream, capability: 'transcriptions', what: 'Transcription' } as const;
  const { result, ledger } = await runMediaCall(context, media, async (provider, call) => {
    const upstream = upstreamModel(call.model);
    const form = entries.map(([name, value]) => [name, name === 'model' ? upstream : value] as const);
    const output = await provider.transcriptions.transcribe({ fields: { ...fields, model: upstream }, form, file }, call);
    // A stream's first event is part of the attempt: an upstream that fails at once can still fall back.
    return output.type === 'stream' ? { ...output, events: await startIterable(output.events) } : output;
  });
  return transcriptionResponse(result, stream, fields, options.logger, ledger);
}

function transcriptionResponse(output: TranscriptionOutput, stream: boolean, fields: TranscriptionFields, logger: Logger, ledger: RequestLedger): Response {
  if (output.type === 'stream') return sseResponse(frames(output.events, logger, ledger), ledger.headers);
  if (output.type === 'body') {
    // The upstream's answer in the asked format; a JSON one is read for its usage.
    const json = /json/i.test(output.contentType) ? parseJson(output.text) : undefined;
    ledger.finish({ status: 'ok', ...usageOf(json) });
    return jsonTextResponse(output.text, 200, { 'content-type': output.contentType, ...ledger.headers });
  }
  const usage = usageOf({ usage: output.usage, duration: output.duration });
  if (stream) return sseResponse(frames(transcriptEvents(output), logger, ledger, usage.units), ledger.headers);
  ledger.finish({ status: 'ok', ...usage });
  const formatted = formatTranscript(output, fields);
  if ('json' in formatted) return jsonResponse(formatted.json, 200, ledger.headers);
  return jsonTextResponse(formatted.text, 200, { 'content-type': TRANSCRIPT_TEXT_TYPE, ...ledger.headers });
}

/**
 * The events as `data:` lines (OpenAI's transcription stream has no `event:` lines), the usage
 * of `transcript.text.done` noted for the ledger. A failure after the first event ends the
 * stream with an `error` event, which the OpenAI SDKs throw; the ledger is settled however the
 * stream ends, the client leaving included.
 */
async function* frames(
  events: Iterable<TranscriptionStreamEvent> | AsyncIterable<TranscriptionStreamEvent>,
  logger: Logger,
  ledger: RequestLedger,
  units?: { audioSeconds?: number | undefined },
): AsyncGenerator<string> {
  let done = false;
  let usage: IRUsage | undefined;
  let failure: unknown;
  try {
    for await (const event of events) {
      ledger.firstByte();
      if (event.type === 'transcript.text.done') {
        done = true;
        usage = usageOf(event).usage;
      }
      yield `data: ${JSON.stringify(event)}\n\n`;
    }
  } catch (error) {
    failure = error;
    const err = toPublicError(error);
    if (err.status >= 500) logger.warn('transcription stream failed', { requestId: ledger.requestId, status: err.status, message: err.message });
    yield `data: ${JSON.stringify({ type: 'error', error: { message: err.message, type: err.type, param: err.param, code: err.code } })}\n\n`;
  } finally {
    ledger.finish({ status: failure === undefined && done ? 'ok' : 'error', usage, units, error: failure });
  }
}

/**
 * OpenAI's transcription usage for the usage event: tokens (`gpt-4o-transcribe`: audio and
 * prompt tokens in, text out) or seconds of audio (`whisper-1`), and the audio's `duration`
 * when the answer has one (`verbose_json`).
 */
function usageOf(answer: unknown): { usage?: IRUsage; units?: { audioSeconds: number } } {
  if (!isRecord(answer)) return {};
  const usage = isRecord(answer.usage) ? answer.usage : undefined;
  const seconds =
    typeof answer.duration === 'number' ? answer.duration : usage?.type === 'duration' && typeof usage.seconds === 'number' ? usage.seconds : undefined;
  const tokens =
    usage && typeof usage.input_tokens === 'number' && typeof usage.output_tokens === 'number'
      ? { input: usage.input_tokens, output: usage.output_tokens, raw: usage }
      : undefined;
  return { ...(tokens ? { usage: tokens } : {}), ...(seconds !== undefined ? { units: { audioSeconds: seconds } } : {}) };
}
