import type { KeyRecord } from '../auth/key-store.js';
import type { ModelEntry } from '../routing/model.js';
import type { IRRequest, IRResponse, IRStreamEvent, TextProtocol } from '../protocols/ir.js';
import type {
  ImageEditRequest,
  ImageGenerationRequest,
  ImageResult,
  ImageStream,
  SpeechRequest,
  TaskCallContext,
  VideoContent,
  VideoJob,
  VideoJobStatus,
  VideoRequest,
} from './media.js';

/**
 * What a provider gets with every call: the caller, the catalog entry, and the client's abort
 * signal (fired only on a real disconnect), which every upstream call must honour.
 */
export interface CallContext {
  signal: AbortSignal;
  requestId: string;
  key: KeyRecord;
  model: ModelEntry;
  /** The host's per-request context (e.g. `{ req, res }` under Node), for custom providers. */
  serverContext: unknown;
  /**
   * The gateway's `limits.streamIdleTimeoutMs`: the longest silence of the upstream while its
   * answer is read; a provider then fails the read (a stream gets its error frame). The built-in
   * providers hand it to undici as the request's body timeout, unless their own
   * `timeouts.bodyMs` is set.
   */
  idleTimeoutMs?: number;
}

/** A client request to send on as it is (only `model` mapped). */
export interface PassthroughRequest {
  protocol: TextProtocol;
  /** The client's body with `model` replaced by the upstream id. */
  body: Record<string, unknown>;
  /**
   * The same body as the client's own JSON text with only `model` replaced, in pieces
   * (`http/replace-json-model.ts`). Sent as it is when present: serializing `body` again costs
   * tens of milliseconds of blocked event loop on a large body.
   */
  rawBody?: readonly string[];
  /** The client's headers; a provider forwards only the protocol's own (e.g. `anthropic-beta`). */
  headers: Headers;
}

/** What `Provider.storedResponse` is asked: which stored response, and what to do with it. */
export interface StoredResponseRequest {
  action: 'retrieve' | 'input_items' | 'delete';
  id: string;
  /** The client's query string, forwarded as it is. */
  query: URLSearchParams;
}

/**
 * An upstream's successful answer to a passthrough call, piped back to the client byte for byte.
 * Upstream error statuses are thrown as `GatewayError` instead.
 */
export interface UpstreamReply {
  status: number;
  contentType: string;
  body: AsyncIterable<Uint8Array>;
  /** Blanks the upstream's credentials and address out of text taken from its answer (error messages). */
  redact?: (text: string) => string;
}

/**
 * How an upstream is reached. A provider implements the capabilities it has; the gateway picks:
 * - `passthrough` when the client's protocol is in `nativeProtocols` (fast and faithful path),
 * - otherwise `streamText` (and `generateText` when the client wants JSON, if provided;
 *   else the stream is accumulated).
 * Errors the client should see are thrown as `GatewayError` before the first event; a stream
 * that fails later throws from its iterator.
 */
export interface Provider {
  /** Provider type, e.g. `openai`, `anthropic`, `local`; used in logs and `owned_by`. */
  readonly type: string;
  /** Client protocols this provider accepts unchanged (model id mapped) through `passthrough`. */
  readonly nativeProtocols?: readonly TextProtocol[];
  passthrough?(request: PassthroughRequest, call: CallContext): Promise<UpstreamReply>;
  streamText?(request: IRRequest, call: CallContext): AsyncIterable<IRStreamEvent>;
  generateText?(request: IRRequest, call: CallContext): Promise<IRResponse>;

  /**
   * Counts a request's input tokens at the upstream, in the client's protocol (Anthropic's
   * `/v1/messages/count_tokens` for `messages`, OpenAI's `/responses/input_tokens` for
   * `responses`); resolves to the upstream's JSON answer, or undefined when this upstream cannot
   * count that protocol (the gateway then counts with a tokenizer).
   */
  countTokens?(request: PassthroughRequest, call: CallContext): Promise<unknown>;
  /**
   * A response the upstream stored (Responses API, `store` true): retrieved, its input items
   * listed (`query` as the client sent it: `limit`, `order`, `after`, `include`) or deleted.
   * Resolves to the upstream's JSON answer.
   */
  storedResponse?(request: StoredResponseRequest, call: CallContext): Promise<unknown>;
  /** Codex's remote context compaction (`POST /responses/compact`), the body as the client sent it. */
  compactResponses?(request: PassthroughRequest, call: CallContext): Promise<unknown>;

  // Media (types in `media.ts`). A model whose provider lacks the call answers 501.
  /** Images from a prompt; an `ImageStream` when `request.stream` is true and the upstream streams. */
  generateImage?(request: ImageGenerationRequest, call: CallContext): Promise<ImageResult | ImageStream>;
  /** Edits of uploaded images; an `ImageStream` when `request.fields.stream` is true and the upstream streams. */
  editImage?(request: ImageEditRequest, call: CallContext): Promise<ImageResult | ImageStream>;
  /**
   * Speech audio in `request.response_format` (default mp3), streamed as the upstream produces it;
   * resolves once the upstream has accepted the request.
   */
  synthesizeSpeech?(request: SpeechRequest, call: CallContext): Promise<AsyncIterable<Uint8Array>>;
  /** Submits a video task; `createVideo`, `getVideo` and `videoContent` come together. */
  createVideo?(request: VideoRequest, call: CallContext): Promise<VideoJob>;
  getVideo?(job: VideoJob, call: TaskCallContext): Promise<VideoJobStatus>;
  /** The finished video, streamed; `range` is the client's `Range` header, to honour or ignore. */
  videoContent?(job: VideoJob, request: { range?: string }, call: TaskCallContext): Promise<VideoContent>;

  /** Releases pooled connections and timers. */
  close?(): Promise<void>;
}
