import type { KeyRecord } from '../auth/key-store.js';
import type { UpstreamWait } from './http/upstream-client.js';
import type { ModelEntry } from '../routing/model.js';
import type { IRRequest, IRResponse, IRStreamEvent, TextProtocol } from '../protocols/ir.js';
import type {
  EmbeddingRequest,
  EmbeddingResult,
  ImageEditRequest,
  ImageGenerationRequest,
  ImageResult,
  ImageStream,
  SpeechRequest,
  TaskCallContext,
  TranscriptionOutput,
  TranscriptionRequest,
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
  idleTimeoutMs?: number | undefined;
  /**
   * Told how long the request waits on the upstream (with metrics on: the gateway's overhead is
   * the rest). The built-in providers pass it to their `UpstreamClient` calls; a custom provider
   * may call `waited(ms)` itself: without it, its requests have no overhead recorded.
   */
  upstreamWait?: UpstreamWait | undefined;
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
  rawBody?: readonly string[] | undefined;
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
  redact?: ((text: string) => string) | undefined;
}

/**
 * Text generation. The gateway picks:
 * - `passthrough` when the client's protocol is in `nativeProtocols` (fast and faithful path),
 * - otherwise `stream` (and `generate` when the client wants JSON, if provided; else the stream
 *   is accumulated).
 * Errors the client should see are thrown as `GatewayError` before the first event; a stream
 * that fails later throws from its iterator.
 */
export interface TextCapability {
  /** Client protocols this provider accepts unchanged (model id mapped) through `passthrough`. */
  readonly nativeProtocols?: readonly TextProtocol[] | undefined;
  /**
   * The same, model by model, for a provider whose models speak different protocols (Vertex AI:
   * Claude takes Messages bodies, Gemini does not). Asked with the model as deployed
   * (`upstreamModel` set); when present, it wins over `nativeProtocols`.
   */
  nativeProtocolsOf?(model: ModelEntry): readonly TextProtocol[];
  passthrough?(request: PassthroughRequest, call: CallContext): Promise<UpstreamReply>;
  stream?(request: IRRequest, call: CallContext): AsyncIterable<IRStreamEvent>;
  /**
   * The same stream as `stream`, each item the events one upstream read produced (the built-in
   * HTTP providers): the gateway then encodes a whole read in one pass and one write. Used
   * instead of `stream` when present.
   */
  streamBatches?(request: IRRequest, call: CallContext): AsyncIterable<readonly IRStreamEvent[]>;
  generate?(request: IRRequest, call: CallContext): Promise<IRResponse>;
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
  compact?(request: PassthroughRequest, call: CallContext): Promise<unknown>;
}

/** Images (types in `media.ts`); each resolves to an `ImageStream` when the request streams and the upstream does. */
export interface ImageCapability {
  /** Images from a prompt (`request.stream` asks for a stream). */
  generate?(request: ImageGenerationRequest, call: CallContext): Promise<ImageResult | ImageStream>;
  /** Edits of uploaded images (`request.fields.stream` asks for a stream). */
  edit?(request: ImageEditRequest, call: CallContext): Promise<ImageResult | ImageStream>;
}

export interface SpeechCapability {
  /**
   * Speech audio in `request.response_format` (default mp3), streamed as the upstream produces it;
   * resolves once the upstream has accepted the request.
   */
  synthesize(request: SpeechRequest, call: CallContext): Promise<AsyncIterable<Uint8Array>>;
}

/**
 * Embeddings (`POST /v1/embeddings`). A provider whose upstream cannot shorten vectors throws
 * `dimensionsUnsupported` (400 naming `dimensions`) for a request with `dimensions`; one that
 * cannot take token arrays throws a 400 naming `input`.
 */
export interface EmbeddingCapability {
  embed(request: EmbeddingRequest, call: CallContext): Promise<EmbeddingResult>;
}

/**
 * Speech to text (`POST /v1/audio/transcriptions`). Resolves to a `Transcript` the gateway
 * formats as the client asked, or to the upstream's own answer in that format (`body`), or,
 * for `stream: true`, to its events (`stream`). Audio the upstream cannot read is a 400 naming `file`.
 */
export interface TranscriptionCapability {
  transcribe(request: TranscriptionRequest, call: CallContext): Promise<TranscriptionOutput>;
}

/** Video tasks: a task submitted with `create` is polled with `get` and downloaded with `content`. */
export interface VideoCapability {
  create(request: VideoRequest, call: CallContext): Promise<VideoJob>;
  get(job: VideoJob, call: TaskCallContext): Promise<VideoJobStatus>;
  /** The finished video, streamed; `range` is the client's `Range` header, to honour or ignore. */
  content(job: VideoJob, request: { range?: string | undefined }, call: TaskCallContext): Promise<VideoContent>;
}

/**
 * Content checks a guardrail (`src/guardrails/adapters/`) asks an upstream for, with the
 * provider's own address, credentials and pooled connections. Each resolves to the upstream's
 * parsed JSON answer; an error status is thrown as a `GatewayError`, as for any other call.
 */
export interface ModerationCapability {
  /** OpenAI's `POST /moderations` with `{ model, input: [...] }` (the openai provider). */
  moderate?(request: { model: string; input: readonly string[] }, call: ModerationCall): Promise<unknown>;
  /** Bedrock's `POST /guardrail/{id}/version/{version}/apply`, SigV4-signed (the bedrock provider). */
  applyGuardrail?(request: ApplyGuardrailRequest, call: ModerationCall): Promise<unknown>;
}

/** What a moderation call carries: the guardrail's abort signal (its timeout, or the client leaving). */
export interface ModerationCall {
  signal: AbortSignal;
  requestId: string;
}

/** An ApplyGuardrail request: which guardrail, whether the texts are a prompt or an answer, the texts. */
export interface ApplyGuardrailRequest {
  guardrailIdentifier: string;
  guardrailVersion: string;
  source: 'INPUT' | 'OUTPUT';
  content: readonly { text: { text: string } }[];
}

/**
 * How an upstream is reached: the capabilities it has, each a group of calls. A model whose
 * provider lacks the capability (or the call) answers 501. Custom providers of the older flat
 * shape (`FlatProvider`) are accepted too and turned into this one by `normalizeProvider`.
 */
export interface Provider {
  /** Provider type, e.g. `openai`, `anthropic`, `local`; used in logs and `owned_by`. */
  readonly type: string;
  /** The shape's version; a provider without it is read as a `FlatProvider`. */
  readonly version: 2;
  /**
   * The ids a price catalog may know an upstream model by, most specific first: the upstream's
   * own spellings reduced to the vendor's names (a Bedrock ARN to the model id it ends with, a
   * Vertex `publishers/google/models/…@001` to `gemini-…`). Default: the upstream id as it is.
   */
  catalogIds?(upstreamModel: string): readonly string[];
  readonly text?: TextCapability | undefined;
  readonly images?: ImageCapability | undefined;
  readonly speech?: SpeechCapability | undefined;
  readonly video?: VideoCapability | undefined;
  readonly embeddings?: EmbeddingCapability | undefined;
  readonly transcriptions?: TranscriptionCapability | undefined;
  /** Content checks for guardrails (`openai-moderation`, `bedrock-guardrail`). */
  readonly moderation?: ModerationCapability | undefined;
  /** Releases pooled connections and timers. */
  close?(): Promise<void>;
}

/** The first provider shape, one object of optional methods; still accepted for custom providers. */
export interface FlatProvider {
  readonly type: string;
  readonly nativeProtocols?: readonly TextProtocol[] | undefined;
  passthrough?: TextCapability['passthrough'] | undefined;
  streamText?: TextCapability['stream'] | undefined;
  generateText?: TextCapability['generate'] | undefined;
  countTokens?: TextCapability['countTokens'] | undefined;
  storedResponse?: TextCapability['storedResponse'] | undefined;
  compactResponses?: TextCapability['compact'] | undefined;
  generateImage?: ImageCapability['generate'] | undefined;
  editImage?: ImageCapability['edit'] | undefined;
  synthesizeSpeech?: SpeechCapability['synthesize'] | undefined;
  /** `createVideo`, `getVideo` and `videoContent` come together. */
  createVideo?: VideoCapability['create'] | undefined;
  getVideo?: VideoCapability['get'] | undefined;
  videoContent?: VideoCapability['content'] | undefined;
  embed?: EmbeddingCapability['embed'] | undefined;
  transcribe?: TranscriptionCapability['transcribe'] | undefined;
  moderate?: ModerationCapability['moderate'] | undefined;
  applyGuardrail?: ModerationCapability['applyGuardrail'] | undefined;
  close?(): Promise<void>;
}
