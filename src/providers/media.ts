import type { ModelEntry } from '../routing/model.js';
import type { EmbeddingRequestBody } from '../schemas/embeddings.js';
import type { ImageEditFields } from '../schemas/image-edit.js';
import type { ImageRequest } from '../schemas/images.js';
import type { SpeechRequest } from '../schemas/speech.js';
import type { TranscriptionFields } from '../schemas/transcription.js';
import type { VideoRequest } from '../schemas/video.js';
import type { TaskStatus } from '../tasks/task-store.js';

/**
 * Plain types of the media capabilities of a `Provider` (images, edits, speech, video tasks).
 * Requests are the client's validated bodies (spec section 2) with `model` already replaced by
 * the catalog's upstream id and unknown fields kept, so a provider that speaks the same API can
 * forward them as they are and one that does not maps them field by field, rejecting (400
 * naming the field) what its upstream cannot express.
 */

/** `POST /v1/images/generations` (spec 2.5). */
export type ImageGenerationRequest = ImageRequest;

/** One uploaded file of a multipart request. */
export interface UploadedFile {
  /** Form field name as sent: `image`, `image[]`, `image[0]`, `mask`. */
  field: string;
  filename: string;
  mimeType: string;
  /**
   * The bytes in one Buffer. For an upload that arrived in chunks they are joined on first read,
   * a copy of the whole file: a provider that only sends the file on should use `chunks`.
   */
  data: Buffer;
  /** The same bytes as they arrived, in order, when the file came in chunks (uploads do). */
  chunks?: readonly Buffer[] | undefined;
}

/** `POST /v1/images/edits` (spec 2.6): the text fields as validated, and the files. */
export interface ImageEditRequest {
  fields: ImageEditFields;
  /** In the order they were sent. */
  images: UploadedFile[];
  mask?: UploadedFile | undefined;
}

export interface GeneratedImage {
  b64_json?: string | undefined;
  url?: string | undefined;
  revised_prompt?: string | undefined;
}

/** A whole answer (spec 2.7): `created`, `data`, and what the upstream echoes (`size`, `usage`…). */
export interface ImageResult {
  created: number;
  data: GeneratedImage[];
  usage?: Record<string, unknown> | undefined;
  /** Other top-level fields of the answer (`background`, `output_format`, `quality`, `size`). */
  extra?: Record<string, unknown> | undefined;
}

/**
 * One event of a streamed image answer, without the endpoint prefix: the gateway sends it as
 * `image_generation.<type>` or `image_edit.<type>`. Other fields (`created_at`, `size`,
 * `quality`, `background`, `output_format`, `usage`) are passed on as they are.
 */
export interface ImageStreamEvent {
  type: 'partial_image' | 'completed';
  b64_json: string;
  partial_image_index?: number | undefined;
  [field: string]: unknown;
}

/** A streamed image answer: returned instead of an `ImageResult` when the request has `stream: true`. */
export interface ImageStream {
  events: AsyncIterable<ImageStreamEvent>;
}

/** What a provider needs to find an upstream video task again; stored with the gateway's task. */
export interface VideoJob {
  /** The upstream task id (never shown to clients). */
  id: string;
  /** Provider-private data kept with the task (e.g. the finished video's URL); JSON only. */
  state?: Record<string, unknown> | undefined;
}

/** An upstream task's status, in the spec's words (section 2.9). */
export interface VideoJobStatus {
  status: TaskStatus;
  /** 0–100; rounded and clamped by the gateway, which also never lets it go down. */
  progress?: number | undefined;
  /** Unix seconds. */
  completedAt?: number | undefined;
  error?: { message: string; type?: string | undefined; code?: string | null | undefined } | undefined;
  /** Replaces the job's `state` when present. */
  state?: Record<string, unknown> | undefined;
}

/** The finished video's bytes, streamed: 200, or 206 for a satisfied `Range`. */
export interface VideoContent {
  status: number;
  /** `content-type`, `content-length`, `content-range`, `accept-ranges`… */
  headers: Record<string, string>;
  body: AsyncIterable<Uint8Array>;
}

/**
 * The context of a video task call that may come from the background poller rather than a
 * request: no caller, only the model and a signal.
 */
export interface TaskCallContext {
  signal: AbortSignal;
  model: ModelEntry;
  /** As `CallContext.idleTimeoutMs`: the longest upstream silence while a video is streamed. */
  idleTimeoutMs?: number | undefined;
}

/**
 * `POST /v1/embeddings`: the client's validated body with `model` replaced by the upstream id.
 * `input` is as sent (a string, strings, a token array or token arrays); `embeddingInputs` lists it.
 */
export type EmbeddingRequest = EmbeddingRequestBody;

/**
 * One input's vector: numbers, or the base64 of its little-endian float32 values (as OpenAI
 * sends it for `encoding_format: "base64"`). The gateway converts to what the client asked for.
 */
export interface EmbeddingVector {
  /** The input's position in the request. */
  index: number;
  embedding: readonly number[] | Float32Array | string;
}

/** An upstream's embeddings, one per input; the gateway answers in OpenAI's shape with the public model id. */
export interface EmbeddingResult {
  data: EmbeddingVector[];
  /** Tokens of the inputs; `total_tokens` defaults to `prompt_tokens`. */
  usage: { prompt_tokens: number; total_tokens?: number | undefined };
}

/**
 * `POST /v1/audio/transcriptions`: the validated fields (`model` mapped; lists as arrays), the
 * text fields exactly as the client sent them (`form`, `model` mapped: what an upstream of the
 * same API gets, `timestamp_granularities[]` and `chunking_strategy[type]` included) and the audio.
 */
export interface TranscriptionRequest {
  fields: TranscriptionFields;
  form: readonly (readonly [name: string, value: string])[];
  file: UploadedFile;
}

/** One word with its time in the audio, in seconds. */
export interface TranscriptWord {
  word: string;
  start: number;
  end: number;
}

/** A stretch of the transcript (a sentence, say) with its time in the audio, in seconds. */
export interface TranscriptSegment {
  text: string;
  start: number;
  end: number;
  /** Who spoke it, for `diarized_json` (`A`, `B`… or a known speaker's name). */
  speaker?: string | undefined;
}

/** OpenAI's transcription usage: tokens (`gpt-4o-transcribe`) or seconds of audio (`whisper-1`). */
export type TranscriptionUsage =
  | { type: 'tokens'; input_tokens: number; output_tokens: number; total_tokens: number; input_token_details?: Record<string, number> | undefined }
  | { type: 'duration'; seconds: number };

/**
 * A transcript the gateway formats as the client asked (json, text, srt, vtt, verbose_json, or
 * a stream of text deltas): for a provider that does not answer in OpenAI's formats itself.
 */
export interface Transcript {
  type: 'transcript';
  text: string;
  /** The language's name in English, lower case (`english`), as OpenAI's verbose answer has it. */
  language?: string | undefined;
  /** Seconds of audio. */
  duration?: number | undefined;
  segments?: TranscriptSegment[] | undefined;
  words?: TranscriptWord[] | undefined;
  usage?: TranscriptionUsage | undefined;
}

/** The upstream's answer in the format the client asked for, passed on as it came. */
export interface TranscriptionBody {
  type: 'body';
  contentType: string;
  text: string;
}

/** One event of a streamed transcription (`transcript.text.delta`, `transcript.text.done`, `transcript.text.segment`…), passed on as it came. */
export interface TranscriptionStreamEvent {
  type: string;
  [field: string]: unknown;
}

/** A streamed transcription: returned when the request has `stream: true` and the upstream streams. */
export interface TranscriptionStream {
  type: 'stream';
  events: AsyncIterable<TranscriptionStreamEvent>;
}

export type TranscriptionOutput = Transcript | TranscriptionBody | TranscriptionStream;

export type { SpeechRequest, VideoRequest };
