import type { Dispatcher } from 'undici';
import { isGatewayError } from '../../errors.js';
import { eventsOf } from '../../protocols/event-batches.js';
import type { IRRequest, IRStreamEvent, TextProtocol } from '../../protocols/ir.js';
import { messagesUpstream } from '../../protocols/messages/index.js';
import { geminiTextCalls } from '../gemini/gemini-text.js';
import { postJson, streamIR } from '../http/json-call.js';
import { UpstreamClient, type UpstreamTimeouts } from '../http/upstream-client.js';
import { forwardBody } from '../http/forward-body.js';
import type { CallContext, Provider } from '../provider.js';
import { type AccessTokens, callbackAccessTokens, fixedAccessToken } from '../http/access-tokens.js';
import { serviceAccountTokens } from './access-token.js';
import { modelSegment, type VertexModel, vertexModelOf } from './publisher.js';
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
  const client = new UpstreamClient({
    baseURL: host.replace(/\/+$/, '') + `/v1/projects/${encodeURIComponent(project)}/locations/${encodeURIComponent(location)}`,
    headers: { ...options.headers },
    ...(options.timeouts ? { timeouts: options.timeouts } : {}),
    ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
  });
  const path = (target: VertexModel, method: string) => `/publishers/${target.publisher}/models/${modelSegment(target.model)}:${method}`;

  /** The bearer header for one call; a 401 from Vertex drops the token so the next call gets another. */
  const authorized = async <T>(run: (headers: Record<string, string>) => Promise<T>): Promise<T> => {
    const token = await tokens.get();
    try {
      return await run({ authorization: `Bearer ${token}` });
    } catch (error) {
      if (isGatewayError(error) && error.code === 'upstream_auth_failed') tokens.invalidate(token);
      throw error;
    }
  };

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

  /** The Gemini calls, with one call's bearer header (A's factory, shared with the gemini provider). */
  const gemini = (auth: Record<string, string>) =>
    geminiTextCalls({
      client,
      path: (model, stream) => path(vertexModelOf(model), stream ? 'streamGenerateContent?alt=sse' : 'generateContent'),
      authHeaders: () => Promise.resolve(auth),
    });

  /**
   * A stream opened inside `authorized`: its first batch is awaited there, so an error status
   * (a 401 among them) is seen before the stream is handed on.
   */
  async function* authorizedStream(open: (auth: Record<string, string>) => AsyncIterable<readonly IRStreamEvent[]>): AsyncGenerator<readonly IRStreamEvent[]> {
    const { batches, first } = await authorized(async (auth) => {
      const batches = open(auth)[Symbol.asyncIterator]();
      return { batches, first: await batches.next() };
    });
    try {
      for (let next = first; !next.done; next = await batches.next()) yield next.value;
    } finally {
      // A client that left ends the upstream read too.
      await batches.return?.();
    }
  }

  const streamBatches = (ir: IRRequest, call: CallContext): AsyncGenerator<readonly IRStreamEvent[]> => {
    const target = vertexModelOf(ir.model);
    if (target.publisher === 'google') return authorizedStream((auth) => gemini(auth).streamBatches(ir, call));
    return authorizedStream((auth) =>
      streamIR(client, path(target, 'streamRawPredict'), claudeBody(ir, target, true), call, messagesUpstream.streamDecoder(), auth),
    );
  };

  return {
    type: 'vertex',
    version: 2,
    text: {
      nativeProtocols: ['messages'],
      nativeProtocolsOf: (model): readonly TextProtocol[] => (vertexModelOf(model.upstreamModel ?? model.id).publisher === 'anthropic' ? ['messages'] : []),

      async passthrough({ body, rawBody, headers }, call) {
        const target = vertexModelOf(call.model.upstreamModel ?? call.model.id);
        const streaming = body.stream === true;
        // The body without `model` and with `anthropic_version`, edited as text when the client's
        // text is at hand (joined once: cheaper than serializing a large body again).
        const wire = rawBody ? rawPredictText(rawBody.join('')) : JSON.stringify(rawPredictBody(body));
        return authorized((auth) =>
          forwardBody(client, path(target, streaming ? 'streamRawPredict' : 'rawPredict'), wire, streaming, call, {
            ...betaHeader(headers.get('anthropic-beta')),
            ...auth,
          }),
        );
      },

      streamBatches,

      stream(ir, call) {
        return eventsOf(streamBatches(ir, call));
      },

      async generate(ir, call) {
        const target = vertexModelOf(ir.model);
        if (target.publisher === 'google') return authorized((auth) => gemini(auth).generate(ir, call));
        const json = await authorized((auth) => postJson(client, path(target, 'rawPredict'), claudeBody(ir, target, false), call, auth));
        return messagesUpstream.decodeResponse(json);
      },
    },

    embeddings: vertexEmbeddings((model, body, call) =>
      authorized((auth) => postJson(client, path({ publisher: 'google', model: vertexModelOf(model).model }, 'predict'), body, call, auth)),
    ),

    close: async () => {
      await Promise.all([client.close(), tokens.close()]);
    },
  };
}
