import type { Dispatcher } from 'undici';
import { chatUpstream } from '../../protocols/chat/index.js';
import type { StreamDecoder } from '../../protocols/codec.js';
import type { IRRequest, TextProtocol } from '../../protocols/ir.js';
import { responsesUpstream } from '../../protocols/responses/index.js';
import { eventsOf } from '../../protocols/event-batches.js';
import { postJson, streamIR } from '../http/json-call.js';
import { UpstreamClient, type UpstreamTimeouts } from '../http/upstream-client.js';
import { forwardBody } from '../http/forward-body.js';
import type { CallContext, Provider, TextCapability } from '../provider.js';
import { openAIMedia } from './openai-media.js';
import { openAIModeration } from './openai-moderation.js';
import { openAIResponsesResources } from './openai-responses-resources.js';

export interface OpenAIProviderOptions {
  /** Includes `/v1`, as in the official SDK. Default `https://api.openai.com/v1`. */
  baseURL?: string | undefined;
  apiKey?: string | undefined;
  /** The upstream serves `/responses`. Default: true for api.openai.com, false elsewhere. */
  responses?: boolean | undefined;
  /**
   * The upstream serves `/chat/completions`. Default true. `false` describes a Responses-only
   * upstream: Chat clients are then translated through Responses too (needs `responses: true`).
   */
  chat?: boolean | undefined;
  /**
   * Upstream protocol used when the client's protocol must be translated (Anthropic clients, and
   * Chat clients when `chat` is false). Default `chat`, which every OpenAI-compatible server
   * speaks, or `responses` when `chat` is false.
   */
  translateVia?: 'chat' | 'responses' | undefined;
  /** Extra headers on every upstream request (e.g. `OpenAI-Organization`). */
  headers?: Record<string, string> | undefined;
  timeouts?: UpstreamTimeouts | undefined;
  dispatcher?: Dispatcher | undefined;
}

const paths: Record<'chat' | 'responses', string> = { chat: '/chat/completions', responses: '/responses' };

/** Any OpenAI-compatible API: OpenAI, Azure-style proxies, vLLM, Ollama, Ark's OpenAI endpoints… */
export function createOpenAIProvider(options: OpenAIProviderOptions = {}): Provider {
  const baseURL = options.baseURL ?? 'https://api.openai.com/v1';
  const responses = options.responses ?? /^https:\/\/api\.openai\.com(\/|$)/.test(baseURL);
  const chat = options.chat ?? true;
  const translateVia = options.translateVia ?? (chat ? 'chat' : 'responses');
  if (!chat && !responses) throw new TypeError('openai provider: chat: false needs responses: true');
  if (translateVia === 'responses' && !responses) {
    throw new TypeError('openai provider: translateVia "responses" needs responses: true');
  }
  if (translateVia === 'chat' && !chat) throw new TypeError('openai provider: translateVia "chat" needs chat: true');
  const client = new UpstreamClient({
    baseURL,
    headers: { ...options.headers, ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}) },
    ...(options.timeouts ? { timeouts: options.timeouts } : {}),
    ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
  });
  const provider = openAICompatibleProvider({
    type: 'openai',
    clientFor: () => client,
    chat,
    responses,
    translateVia,
    resources: responses ? openAIResponsesResources(client) : {},
    media: openAIMedia(client),
    close: () => client.close(),
  });
  return { ...provider, moderation: openAIModeration(client) };
}

/**
 * What tells OpenAI-compatible upstreams apart: where a call for a model goes and with which
 * credentials (`clientFor`), which protocols they speak, and their media calls. The `openai`
 * provider has one client for everything; the `azure` provider one per deployment.
 */
export interface OpenAICompatibleUpstream {
  type: string;
  /** The client a call for `model` (the upstream id) goes through; it owns the path prefix and auth. */
  clientFor(model: string): UpstreamClient;
  /** The upstream serves `/chat/completions`. */
  chat: boolean;
  /** The upstream serves `/responses`. */
  responses: boolean;
  /** Upstream protocol of translated requests; one the upstream serves. */
  translateVia: 'chat' | 'responses';
  /** The Responses API's other endpoints, where the upstream has them. */
  resources: Pick<TextCapability, 'countTokens' | 'storedResponse' | 'compact'>;
  media: Pick<Provider, 'images' | 'speech' | 'video' | 'embeddings' | 'transcriptions'>;
  /** Wraps the decoder of translated streams, for an upstream's own stream quirks. */
  streamDecoder?: ((decoder: StreamDecoder) => StreamDecoder) | undefined;
  close(): Promise<void>;
}

/**
 * The OpenAI wire for any such upstream: passthrough of Chat and Responses bodies the upstream
 * speaks (model mapped, bytes piped), the IR through `translateVia` for the rest.
 */
export function openAICompatibleProvider(upstream: OpenAICompatibleUpstream): Provider {
  const { clientFor, translateVia } = upstream;
  const nativeProtocols: TextProtocol[] = [...(upstream.chat ? (['chat'] as const) : []), ...(upstream.responses ? (['responses'] as const) : [])];
  const codec = translateVia === 'chat' ? chatUpstream : responsesUpstream;
  const decoder = () => (upstream.streamDecoder ? upstream.streamDecoder(codec.streamDecoder()) : codec.streamDecoder());

  const streamBatches = (ir: IRRequest, call: CallContext) =>
    streamIR(clientFor(ir.model), paths[translateVia], codec.encodeRequest({ ...ir, stream: true }), call, decoder());

  return {
    type: upstream.type,
    version: 2,
    text: {
      nativeProtocols,

      async passthrough({ protocol, body, rawBody }, call) {
        const path = paths[protocol as 'chat' | 'responses'];
        const client = clientFor(call.model.upstreamModel ?? call.model.id);
        return forwardBody(client, path, rawBody ?? JSON.stringify(body), body.stream === true, call);
      },

      streamBatches,

      stream(ir, call) {
        return eventsOf(streamBatches(ir, call));
      },

      async generate(ir, call) {
        return codec.decodeResponse(await postJson(clientFor(ir.model), paths[translateVia], codec.encodeRequest({ ...ir, stream: false }), call));
      },

      ...upstream.resources,
    },
    ...upstream.media,

    close: () => upstream.close(),
  };
}
