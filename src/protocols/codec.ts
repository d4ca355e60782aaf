import type { GenericSchema } from 'valibot';
import type { GatewayError } from '../errors.js';
import type { SseMessage } from './sse-parse.js';
import type { StorageUriCheck } from './storage-uris.js';
import type { IRRequest, IRResponse, IRStreamEvent, IRUsage, TextProtocol } from './ir.js';
import type { ReadFields } from './ignored-fields.js';

/**
 * The two sides of a text protocol. A client codec serves the protocol's clients (a route);
 * an upstream codec speaks it to a provider. Each protocol folder (`protocols/<name>/index.ts`)
 * exports one of each, and the rest of the gateway reaches the protocol only through them.
 */

/** What a client-side encoder needs besides the IR: who asked, for what, and where to report bugs. */
export interface EncodeContext {
  /** The public model id the client asked for; encoders echo it, never the upstream id. */
  model: string;
  /** The client's request body as validated (unknown fields kept), for echoes and stream options. */
  request: Record<string, unknown>;
  requestId: string;
  /**
   * Called with an error that ends a stream after it started, before the encoder writes the
   * protocol's error frame (the gateway logs it and feeds usage hooks). The error passed is the
   * masked, public one; the original is in `cause`.
   */
  onStreamError?: (error: GatewayError) => void;
}

/** One client protocol's stream state machine: IR events in, SSE text out. */
export interface StreamEncoder {
  /** SSE frames (possibly several, concatenated) for one IR event; '' when there is nothing to send. */
  push(event: IRStreamEvent): string;
  /** True once the protocol's terminal frames have been produced. */
  readonly finished: boolean;
  /** The protocol's in-stream error frames, for a failure after the stream started. */
  fail(error: GatewayError): string;
}

/**
 * One upstream protocol's stream state machine: SSE messages in, IR events out, synchronously, so
 * a whole upstream read is decoded in one pass. An upstream error event, an invalid event or a
 * stream cut before its terminal event throws (a `GatewayError`).
 */
export interface StreamDecoder {
  /** Decodes one message, appending its IR events (often none, sometimes several) to `out`. */
  push(message: SseMessage, out: IRStreamEvent[]): void;
  /** The upstream's bytes ended: appends what is left, or throws when the stream was cut. */
  end(out: IRStreamEvent[]): void;
  /** True once the terminal event was decoded; later messages are ignored. */
  readonly finished: boolean;
}

/** A request body: parsed and validated, and the client's JSON text when it is still what was sent. */
export interface TextBody {
  parsed: Record<string, unknown>;
  text: string | undefined;
}

/**
 * What the passthrough path needs to know of a protocol's stream without re-encoding it: where
 * usage is, which event ends it, and how to append an error.
 */
export interface StreamTap {
  protocol: TextProtocol;
  /**
   * Matches text found in every frame `observe` must see (usage, the terminal event, an error),
   * with the `g` flag: the passthrough path parses only the frames that hold a match, and
   * forwards the rest as bytes. A match where it does not matter (in an answer's text) only
   * costs a parse.
   */
  marker: RegExp;
  /**
   * Reads one SSE message; cheap checks first, so most chunks are never JSON-parsed here.
   * `failed` marks a terminal error event: the stream ends as the protocol says, but the request
   * failed (and is reported so).
   */
  observe(
    event: string | undefined,
    data: string,
  ): {
    usage?: IRUsage | undefined;
    terminal?: boolean | undefined;
    failed?: boolean | undefined;
    responseId?: string | undefined;
    /** The ids of the answer's output items (Responses), which the key may later reference. */
    outputItemIds?: string[] | undefined;
  };
  usageOfJson(json: unknown): IRUsage;
  /** The ids of a JSON answer's output items, for a protocol whose upstream stores them (Responses). */
  outputItemIdsOfJson?(json: unknown): string[];
  /** The protocol's in-stream error; `requestId` is the answer's (Anthropic's body carries it). */
  errorFrame(error: GatewayError, requestId: string): string;
  /**
   * The frame sent in place of an upstream's error event (`data`, the event's data), for a
   * protocol whose error body names the request: the answer's id replaces the upstream's.
   */
  restampedError?(data: string, requestId: string): string | undefined;
}

/** The protocol as its clients speak it: the request they send, the answer and stream they parse. */
export interface ClientCodec {
  protocol: TextProtocol;
  /** Path used in messages and usage events, e.g. `/v1/chat/completions`. */
  endpoint: string;
  /** The request body's shape; unknown fields are kept. */
  schema: GenericSchema;
  /** Checks made before the body is read (e.g. the Messages version header). */
  checkHeaders?(request: Request): void;
  /**
   * Fields a protocol carries outside its body, added to the validated body where the others
   * carry them: Gemini names the model in the path and streams by method (`model`, `stream`).
   */
  routeFields?(params: Record<string, string>, url: URL): Record<string, unknown>;
  decodeRequest(body: Record<string, unknown>, upstreamModel: string): IRRequest;
  /** What `decodeRequest` (and the route) reads; anything else is named as ignored (`ignored-fields.ts`). */
  readFields: ReadFields;
  encodeResponse(response: IRResponse, context: EncodeContext): Record<string, unknown>;
  /** A fresh stream state machine for one answer: IR events in, SSE text out. */
  streamEncoder(context: EncodeContext): StreamEncoder;
  /** How the passthrough path reads usage and ends a cut stream in this protocol. */
  tap: StreamTap;
  /** The body a passthrough upstream gets, when some of what the client sent cannot go there. */
  forPassthrough?(body: TextBody): TextBody;
  /** The protocol chains turns on the gateway's side (`previous_response_id`, `store`). */
  storesConversations?: boolean;
}

/** Options an upstream codec's request encoder takes from its provider's config. */
export interface UpstreamEncodeOptions {
  /** `max_tokens` for a protocol that requires it, when the request sets none. */
  defaultMaxTokens?: number;
  /**
   * Which cloud-storage URIs (`s3://`, `gs://`, Files-API names) the request may pass on, for
   * an upstream that reads them (`storage-uris.ts`). Default: none.
   */
  storageUris?: StorageUriCheck;
}

/** The protocol as an upstream speaks it: the request it takes, the answer and stream it sends. */
export interface UpstreamCodec {
  protocol: TextProtocol;
  encodeRequest(request: IRRequest, options?: UpstreamEncodeOptions): Record<string, unknown>;
  decodeResponse(json: unknown): IRResponse;
  /** A fresh stream decoder for one answer. */
  streamDecoder(): StreamDecoder;
  usageOf(raw: unknown): IRUsage;
}
