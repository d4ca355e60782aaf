import type { Dispatcher } from 'undici';
import { eventsOf } from '../../protocols/event-batches.js';
import type { IRRequest, IRStreamEvent, TextProtocol } from '../../protocols/ir.js';
import { checkSourceUris, messagesUpstream } from '../../protocols/messages/index.js';
import { storageUriCheck } from '../../protocols/storage-uris.js';
import { geminiTextCalls } from '../gemini/gemini-text.js';
import { postJson, streamIR } from '../http/json-call.js';
import { BearerClient } from '../http/bearer-client.js';
import type { UpstreamTimeouts } from '../http/upstream-client.js';
import { forwardBody } from '../http/forward-body.js';
import type { CallContext, Provider } from '../provider.js';
import { type AccessTokens, callbackAccessTokens, fixedAccessToken } from '../http/access-tokens.js';
import { serviceAccountTokens } from './access-token.js';
import { modelSegment, type VertexModel, vertexCatalogIds, vertexModelOf } from './publisher.js';
import { rawPredictBody, rawPredictText } from './raw-predict-body.js';
import { readServiceAccount, type ServiceAccountKey } from './service-account.js';
import { vertexEmbeddings } from './vertex-embeddings.js';

export interface VertexProviderOptions {
  /** Google Cloud project id. Default: the service-account key's `project_id`. */
  project?: string | undefined;
  /** Region, e.g. `us-east5`, or `global`. Default `us-central1`. */
  location?: string | undefined;
  /** A service-account key: the path of its JSON file (read at start-up), or the parsed object. */
  credentials?: string | ServiceAccountKey | undefined;
  /** A ready OAuth access token, sent as it is (the host keeps it fresh). */
  accessToken?: string | undefined;
  /** The host's own token source (workload identity, a metadata server), asked on every call. */
  getAccessToken?: (() => string | Promise<string>) | undefined;
  /**
   * The API's host, without `/v1`. Default `https://{location}-aiplatform.googleapis.com`
   * (`https://aiplatform.googleapis.com` for `global`); set for private endpoints and tests.
   */
  baseURL?: string | undefined;
  /** Which of a Messages client's `anthropic-beta` values are forwarded to Claude: `'all'` (default) or an allowlist. */
  betas?: 'all' | readonly string[] | undefined;
  /**
   * Prefixes of the `gs://` URIs a client's image or file may name (a prefix
   * matches whole path segments). Vertex AI reads them with the project's service agent, so any
   * other is a 400 naming the part. Default: none. A key's `storageUris` narrow this further.
   */
  storageUris?: readonly string[] | undefined;
  /** `max_tokens` for translated Claude requests that set none. Default 4096. */
  defaultMaxTokens?: number | undefined;
  headers?: Record<string, string> | undefined;
  timeouts?: UpstreamTimeouts | undefined;
  dispatcher?: Dispatcher | undefined;
}

/**
 * Vertex AI: Gemini models on the Gemini wire (`publishers/google`) and Claude models on the
 * Messages wire (`publishers/anthropic`, `rawPredict` / `streamRawPredict`), with an OAuth access
 * token. Which publisher serves a model is read from its upstream id (`publisher.ts`).
 */
export function createVertexProvider(options: VertexProviderOptions): Provider {
  const account = options.credentials === undefined ? undefined : readServiceAccount(options.credentials);
  const sources = [account, options.accessToken, options.getAccessToken].filter((source) => source !== undefined);
  if (sources.length !== 1) throw new TypeError('vertex: give exactly one of credentials, accessToken or getAccessToken');
  const project = options.project ?? account?.projectId;
  if (!project) throw new TypeError('vertex: project is required (the service-account key has no project_id)');
  const location = options.location ?? 'us-central1';
  const host = options.baseURL ?? `https://${location === 'global' ? '' : `${location}-`}aiplatform.googleapis.com`;

  const tokens: AccessTokens = account
    ? serviceAccountTokens(account, { dispatcher: options.dispatcher, timeouts: options.timeouts })
    : options.accessToken !== undefined
      ? fixedAccessToken(options.accessToken)
      : callbackAccessTokens(options.getAccessToken!, 'Vertex AI');
  // Every call with the current token; a 401 (only) drops it (see `BearerClient`).
  const client = new BearerClient({
    baseURL: host.replace(/\/+$/, '') + `/v1/projects/${encodeURIComponent(project)}/locations/${encodeURIComponent(location)}`,
    headers: { ...options.headers },
    tokens,
    ...(options.timeouts ? { timeouts: options.timeouts } : {}),
    ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
  });
  const path = (target: VertexModel, method: string) => `/publishers/${target.publisher}/models/${modelSegment(target.model)}:${method}`;

  const allowedBetas = options.betas === undefined || options.betas === 'all' ? undefined : new Set(options.betas);
  const betaHeader = (clientBeta: string | null): Record<string, string> => {
    const forwarded = (clientBeta ?? '')
      .split(',')
      .map((value) => value.trim())
      .filter((value) => value !== '' && (!allowedBetas || allowedBetas.has(value)));
    return forwarded.length > 0 ? { 'anthropic-beta': forwarded.join(',') } : {};
  };
  const encodeOptions = options.defaultMaxTokens ? { defaultMaxTokens: options.defaultMaxTokens } : {};
  const claudeBody = (ir: IRRequest, target: VertexModel, stream: boolean) =>
    rawPredictBody(messagesUpstream.encodeRequest({ ...ir, model: target.model, stream }, encodeOptions));

  /** The Gemini calls (shared with the gemini provider), under Vertex's publisher paths. */
  const gemini = geminiTextCalls({
    client,
    path: (model, stream) => path(vertexModelOf(model), stream ? 'streamGenerateContent?alt=sse' : 'generateContent'),
    storageUris: options.storageUris,
  });

  const streamBatches = (ir: IRRequest, call: CallContext): AsyncIterable<readonly IRStreamEvent[]> => {
    const target = vertexModelOf(ir.model);
    if (target.publisher === 'google') return gemini.streamBatches(ir, call);
    return streamIR(client, path(target, 'streamRawPredict'), claudeBody(ir, target, true), call, messagesUpstream.streamDecoder());
  };

  return {
    type: 'vertex',
    version: 2,
    catalogIds: vertexCatalogIds,
    text: {
      nativeProtocols: ['messages'],
      nativeProtocolsOf: (model): readonly TextProtocol[] => (vertexModelOf(model.upstreamModel ?? model.id).publisher === 'anthropic' ? ['messages'] : []),

      async passthrough({ body, rawBody, headers }, call) {
        const target = vertexModelOf(call.model.upstreamModel ?? call.model.id);
        const streaming = body.stream === true;
        checkSourceUris(body, storageUriCheck(options.storageUris, call.key.storageUris));
        // The body without `model` and with `anthropic_version`, edited as text when the client's
        // text is at hand (joined once: cheaper than serializing a large body again).
        const wire = rawBody ? rawPredictText(rawBody.join('')) : JSON.stringify(rawPredictBody(body));
        return forwardBody(
          client,
          path(target, streaming ? 'streamRawPredict' : 'rawPredict'),
          wire,
          streaming,
          call,
          betaHeader(headers.get('anthropic-beta')),
        );
      },

      streamBatches,

      stream(ir, call) {
        return eventsOf(streamBatches(ir, call));
      },

      async generate(ir, call) {
        const target = vertexModelOf(ir.model);
        if (target.publisher === 'google') return gemini.generate(ir, call);
        const json = await postJson(client, path(target, 'rawPredict'), claudeBody(ir, target, false), call);
        return messagesUpstream.decodeResponse(json);
      },
    },

    embeddings: vertexEmbeddings((model, body, call) =>
      postJson(client, path({ publisher: 'google', model: vertexModelOf(model).model }, 'predict'), body, call),
    ),

    close: async () => {
      await Promise.all([client.close(), tokens.close()]);
    },
  };
}
