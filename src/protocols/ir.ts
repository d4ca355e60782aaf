/**
 * The protocol-neutral intermediate representation (IR) of a text generation.
 *
 * Each client protocol (chat, responses, messages) has a decoder from its request to `IRRequest`
 * and encoders from `IRResponse` / `IRStreamEvent`s to its JSON body and SSE stream; each upstream
 * protocol has the reverse. Three protocols therefore cost six codecs, not six pairwise bridges.
 *
 * Conventions:
 * - Usage follows OpenAI semantics: `input` counts every prompt token, cached ones included;
 *   `output` counts every generated token, reasoning included. Unknown counters are `undefined`,
 *   never a fake 0 (encoders print 0 where a protocol requires the field).
 * - Tool calls keep the id the model gave them (`call_…`, `toolu_…`); encoders never re-key them,
 *   so a client can match `function_call_output` / `tool_result` to the call.
 * - `arguments` is always the raw JSON text of the call's input.
 * - Gemini thought signatures are positional: Gemini signs a part (the first `functionCall` of a
 *   step, or a text part) and wants the signature back on that same part. In the IR the
 *   signature rides on a reasoning part (`thoughtSignature`) placed immediately before the part it
 *   signs; the Gemini upstream encoder puts it back on the next text or tool call of the turn (an
 *   empty text part when nothing follows) and drops the reasoning text. Streams close that
 *   reasoning part with `reasoning_end { thoughtSignature }` just before the signed part starts.
 *   Clients carry it in what they send back unchanged, behind the gateway-private prefix of
 *   `thought-signature.ts`: Messages in the thinking block `signature`, Responses in the reasoning
 *   item's `encrypted_content`; and, for clients that drop those, every protocol in the id of the
 *   tool call that follows (`signed-call-id.ts`: the `tool_use` id, the `call_id`, the Chat tool
 *   call id). The decoders put it back before the call (a thinking block's or reasoning item's
 *   wins) and keep the call's own id, which every other upstream gets, on passthrough too. Only a
 *   Gemini upstream receives a signature; every other encoder ignores the field, and a Gemini
 *   upstream never receives another vendor's signature nor a forged one: a call it did not sign
 *   gets Google's skip value (`gemini/skip-signature.ts`).
 */

export type TextProtocol = 'chat' | 'responses' | 'messages' | 'gemini';

export interface CacheControl {
  type: string;
  ttl?: string | undefined;
  [key: string]: unknown;
}

export type IRContentPart = IRTextPart | IRImagePart | IRFilePart;

export interface IRTextPart {
  type: 'text';
  text: string;
  cacheControl?: CacheControl | undefined;
}

/** An image given either by URL (http(s) or data URL) or as base64 data with its media type. */
export interface IRImagePart {
  type: 'image';
  url?: string | undefined;
  data?: string | undefined;
  mediaType?: string | undefined;
  detail?: 'auto' | 'low' | 'high' | undefined;
  cacheControl?: CacheControl | undefined;
  /** Where the client's request holds `url` (`messages[1].content[0].image_url.url`), for errors about it. */
  param?: string | undefined;
}

export interface IRFilePart {
  type: 'file';
  /** Base64 data (without the data-URL prefix). */
  data?: string | undefined;
  mediaType?: string | undefined;
  filename?: string | undefined;
  fileId?: string | undefined;
  url?: string | undefined;
  cacheControl?: CacheControl | undefined;
  /** Where the client's request holds `url` or `fileId`, for errors about it. */
  param?: string | undefined;
}

export interface IRToolCall {
  type: 'tool_call';
  id: string;
  name: string;
  arguments: string;
  cacheControl?: CacheControl | undefined;
  /** Where the client wrote `arguments` as text (`input[3].arguments`), for errors about it. */
  param?: string | undefined;
}

export interface IRReasoningPart {
  type: 'reasoning';
  text: string;
  /** Anthropic thinking signature, replayed unchanged. */
  signature?: string | undefined;
  /** Anthropic `redacted_thinking` data: opaque, and only Anthropic takes it back. */
  redacted?: string | undefined;
  /** OpenAI Responses `encrypted_content`: opaque, and only an OpenAI Responses upstream takes it back. */
  encrypted?: string | undefined;
  /** Responses reasoning item id, when it came from one. */
  id?: string | undefined;
  /** Gemini thought signature of the part that follows this one (see the conventions above); only Gemini takes it back. */
  thoughtSignature?: string | undefined;
}

export type IRAssistantPart = IRTextPart | IRReasoningPart | IRToolCall | { type: 'refusal'; refusal: string };

export type IRMessage =
  | { role: 'system'; content: IRTextPart[] }
  | { role: 'user'; content: IRContentPart[] }
  | { role: 'assistant'; content: IRAssistantPart[] }
  | {
      role: 'tool';
      toolCallId: string;
      content: IRContentPart[];
      isError?: boolean | undefined;
      name?: string | undefined;
      /** Where the client wrote the id of the call it answers (`messages[3].tool_call_id`), for errors about it. */
      param?: string | undefined;
    };

export interface IRTool {
  name: string;
  description?: string | undefined;
  /** JSON Schema of the input object. */
  parameters?: Record<string, unknown> | undefined;
  /** Where the client wrote `parameters` (`tools[2].function.parameters`), for errors about it. */
  schemaField?: string | undefined;
  strict?: boolean | undefined;
  cacheControl?: CacheControl | undefined;
}

export type IRToolChoice =
  | { type: 'auto'; parallel?: boolean | undefined }
  | { type: 'none' }
  | { type: 'required'; parallel?: boolean | undefined }
  | { type: 'tool'; name: string; parallel?: boolean | undefined };

/**
 * The request-level fields: the IR's own sampling and output controls, and the OpenAI fields the
 * decoders keep in `passthrough`. `upstream-params.ts` says what each upstream wire does with each.
 */
export type ParamName =
  | 'temperature'
  | 'topP'
  | 'topK'
  | 'stop'
  | 'maxOutputTokens'
  | 'responseFormat'
  | 'toolChoice'
  | 'parallelToolCalls'
  | 'reasoning'
  | 'metadata'
  | 'user'
  | 'seed'
  | 'frequency_penalty'
  | 'presence_penalty'
  | 'logit_bias'
  | 'verbosity'
  | 'prediction'
  | 'service_tier'
  | 'store'
  | 'prompt_cache_key'
  | 'prompt_cache_retention'
  | 'prompt_cache_options'
  | 'safety_identifier'
  | 'moderation'
  | 'include';

/** A request-level field a 400 may name: one of the above, or the conversation itself (`messages`, `input`, `contents`). */
export type ClientField = ParamName | 'messages';

export interface IRRequest {
  /** The upstream model id (already mapped from the public id). */
  model: string;
  /** System instructions, in order; `instructions` (Responses) and `system` (Messages) land here. */
  system: IRTextPart[];
  messages: IRMessage[];
  tools?: IRTool[] | undefined;
  toolChoice?: IRToolChoice | undefined;
  parallelToolCalls?: boolean | undefined;
  maxOutputTokens?: number | undefined;
  temperature?: number | undefined;
  topP?: number | undefined;
  /** Sampling among the K likeliest tokens (Anthropic, Gemini); dropped for upstreams without it (`upstream-params.ts`). */
  topK?: number | undefined;
  stop?: string[] | undefined;
  reasoning?: { effort?: string | undefined; budgetTokens?: number | undefined; summary?: string | undefined } | undefined;
  /** `json_schema` / `json_object` / `text` output format. */
  responseFormat?:
    | { type: 'text' }
    | { type: 'json_object' }
    | {
        type: 'json_schema';
        name?: string | undefined;
        schema?: unknown;
        /** Where the client wrote `schema` (`response_format.json_schema.schema`), for errors about it. */
        schemaField?: string | undefined;
        strict?: boolean | undefined;
        description?: string | undefined;
      }
    | undefined;
  metadata?: Record<string, unknown> | undefined;
  user?: string | undefined;
  stream: boolean;
  /**
   * Tool types the client offered that this upstream cannot run (hosted tools such as
   * `web_search`), dropped from `tools`; the gateway names them in `x-infergate-dropped-tools`.
   */
  droppedTools?: string[] | undefined;
  /**
   * Where the client wrote each request-level field (`topK` → `generationConfig.topK`), so a 400
   * or `x-infergate-dropped-params` names it as the client sent it; unset entries use Chat's names.
   */
  clientFields?: Partial<Record<ClientField, string>> | undefined;
  /**
   * Sampling hints the upstream could not take, named as the client sent them: filled by the
   * upstream encoder (`admitParams`) when the pipeline gives it an array, for `x-infergate-dropped-params`.
   */
  droppedParams?: string[] | undefined;
  /** Refuse (400) instead of dropping a hint the upstream lacks (the model's or key's `strictParams`). */
  strictParams?: boolean | undefined;
  /**
   * Fields with the same name and meaning in every OpenAI protocol (`prompt_cache_key`,
   * `service_tier`, `store`, `seed`…), kept so an OpenAI-family upstream receives them unchanged.
   */
  passthrough: Record<string, unknown>;
}

export type IRFinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'stop_sequence' | 'pause';

export interface IRUsage {
  /** Every prompt token, cached reads and cache writes included (OpenAI semantics). */
  input?: number | undefined;
  cachedRead?: number | undefined;
  cacheWrite?: number | undefined;
  /** Every generated token, reasoning included. */
  output?: number | undefined;
  reasoning?: number | undefined;
  /** The upstream's own usage object, for the usage event (encoders never read it). */
  raw?: Record<string, unknown> | undefined;
}

export interface IRResponse {
  id: string;
  model: string;
  /** Output parts in order: reasoning, text, tool calls, refusal. */
  content: IRAssistantPart[];
  finishReason: IRFinishReason;
  stopSequence?: string | undefined;
  usage: IRUsage;
  /** Unix seconds. */
  created: number;
}

/**
 * A streamed generation. Parts are sequential: at most one part is open at a time, and a
 * delta of another kind, or a new `tool_call_start`, closes the open part. Decoders of upstream
 * streams that interleave (parallel chat tool calls) buffer so that this holds.
 *
 * Order: `start`, then part events, then `finish` (usage may also arrive in `start` and `usage`).
 * A stream that fails after `start` throws from the iterator (a `GatewayError`); it never ends
 * without `finish` unless it throws.
 */
export type IRStreamEvent =
  | { type: 'start'; id: string; model: string; created: number; usage?: IRUsage | undefined }
  | { type: 'text_delta'; text: string }
  | { type: 'refusal_delta'; text: string }
  /** `id`: the Responses reasoning item's, when the part came from one (its encrypted content is bound to it). */
  | { type: 'reasoning_delta'; text: string; id?: string | undefined }
  /** Closes the open reasoning part with its signature or opaque content. */
  | {
      type: 'reasoning_end';
      /** The Responses reasoning item's id, as on `reasoning_delta`. */
      id?: string | undefined;
      signature?: string | undefined;
      redacted?: string | undefined;
      encrypted?: string | undefined;
      /** Gemini thought signature of the part that starts next. */
      thoughtSignature?: string | undefined;
    }
  | { type: 'tool_call_start'; id: string; name: string }
  | { type: 'tool_call_delta'; arguments: string }
  | { type: 'usage'; usage: IRUsage }
  | { type: 'finish'; reason: IRFinishReason; stopSequence?: string | undefined; usage?: IRUsage | undefined };

/** Merge usage counters: later values overwrite earlier ones (upstream counters are cumulative). */
export function mergeUsage(base: IRUsage, update: IRUsage | undefined): IRUsage {
  if (!update) return base;
  const merged: IRUsage = { ...base };
  for (const key of ['input', 'cachedRead', 'cacheWrite', 'output', 'reasoning'] as const) {
    const value = update[key];
    if (value !== undefined && value !== null) merged[key] = value;
  }
  // Anthropic splits its usage between `message_start` and `message_delta`: keep both halves.
  if (update.raw) merged.raw = base.raw ? { ...base.raw, ...update.raw } : update.raw;
  return merged;
}
