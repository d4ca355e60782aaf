import type { Dispatcher } from 'undici';
import type { Json } from '../../json.js';
import { bedrockCatalogIds, converseUpstream, isBedrockClaude } from '../../protocols/converse/index.js';
import { eventsOf } from '../../protocols/event-batches.js';
import type { IRRequest, IRStreamEvent, TextProtocol } from '../../protocols/ir.js';
import { checkSourceUris, messagesUpstream } from '../../protocols/messages/index.js';
import { storageUriCheck } from '../../protocols/storage-uris.js';
import { parseAnswer } from '../http/get-json.js';
import { stringifyBody } from '../http/stringify-body.js';
import { readText, UpstreamClient, type UpstreamCall, type UpstreamResult, type UpstreamTimeouts } from '../http/upstream-client.js';
import { expectEventStream } from '../http/upstream-error.js';
import type { CallContext, Provider } from '../provider.js';
import { countClaudeTokens } from './bedrock-count-tokens.js';
import { bedrockEmbeddings } from './bedrock-embeddings.js';
import { bedrockError } from './bedrock-error.js';
import { BEDROCK_BETAS, bedrockBetas } from './betas.js';
import { anthropicEventOf, anthropicSse } from './claude-chunks.js';
import { eventStreamIR } from './event-stream.js';
import { invokeBody } from './invoke-body.js';
import { payloadHash } from './payload-hash.js';
import { type AwsCredentialSource, BedrockSigner, configuredCredentials } from './sigv4.js';

export interface BedrockProviderOptions {
  /** AWS region, e.g. `us-east-1`. Default: `AWS_REGION`, else `AWS_DEFAULT_REGION`. */
  region?: string | undefined;
  /** An access key pair (with `sessionToken` for temporary credentials). Default: `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`. */
  accessKeyId?: string | undefined;
  secretAccessKey?: string | undefined;
  sessionToken?: string | undefined;
  /** The host's own credentials or credential provider (e.g. `fromNodeProviderChain()`); wins over the fields above. */
  credentials?: AwsCredentialSource | undefined;
  /** The runtime endpoint. Default `https://bedrock-runtime.{region}.amazonaws.com`; set for a VPC endpoint. */
  baseURL?: string | undefined;
  /**
   * Which of a Messages client's betas (its `anthropic-beta` header and its body's `anthropic_beta`)
   * reach Claude: an allowlist (default: the betas AWS documents for Bedrock, `BEDROCK_BETAS`) or `'all'`.
   */
  betas?: 'all' | readonly string[] | undefined;
  /**
   * How Claude models are called: `invoke` (default) with Anthropic's Messages body, which keeps
   * every Messages feature (Messages clients pass through), or `converse` like every other model.
   */
  claudeVia?: 'invoke' | 'converse' | undefined;
  /**
   * A Bedrock guardrail applied to every text call: Converse's `guardrailConfig`, the
   * `X-Amzn-Bedrock-Guardrail*` headers on `invoke`. What it blocks ends as a content filter.
   */
  guardrail?: BedrockGuardrail | undefined;
  /**
   * Prefixes of the `s3://` URIs a client's image or document may name (`['s3://uploads/tenant-a/']`;
   * a prefix matches whole path segments). Bedrock reads them with the gateway's own IAM identity,
   * so any other is a 400 naming the part. Default: none. A key's `storageUris` narrow this further.
   */
  storageUris?: readonly string[] | undefined;
  /** `max_tokens` for translated requests that set none: Claude's (which requires it; default 4096), and Converse's when set. */
  defaultMaxTokens?: number | undefined;
  headers?: Record<string, string> | undefined;
  timeouts?: UpstreamTimeouts | undefined;
  dispatcher?: Dispatcher | undefined;
}

export interface BedrockGuardrail {
  /** The guardrail's id or ARN. */
  identifier: string;
  /** Its version, e.g. `1` or `DRAFT`. */
  version: string;
  /** Whether Bedrock adds the guardrail's trace to answers. Default: Bedrock's (disabled). */
  trace?: 'enabled' | 'disabled' | 'enabled_full' | undefined;
}

const EVENT_STREAM = 'application/vnd.amazon.eventstream';

/**
 * Amazon Bedrock: the Converse API (`/model/{id}/converse`, `/converse-stream`) for every
 * model, through the IR; Claude on `invoke` / `invoke-with-response-stream` with the Anthropic
 * Messages body (Messages clients pass through, others are translated to Messages), unless
 * `claudeVia: 'converse'`; Titan and Cohere embeddings on `invoke`. Requests are signed with
 * SigV4 over the exact bytes sent.
 */
export function createBedrockProvider(options: BedrockProviderOptions = {}): Provider {
  const env = typeof process === 'undefined' ? {} : process.env;
  const region = options.region ?? env.AWS_REGION ?? env.AWS_DEFAULT_REGION;
  if (!region) throw new TypeError('bedrock: region is required (or AWS_REGION / AWS_DEFAULT_REGION)');
  const credentials = options.credentials ?? configuredCredentials(options, env);
  if (!credentials)
    throw new TypeError('bedrock: no credentials (accessKeyId + secretAccessKey, a credentials provider, or AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY)');
  const signer = new BedrockSigner(region, credentials);
  const base = (options.baseURL ?? `https://bedrock-runtime.${region}.amazonaws.com`).replace(/\/+$/, '');
  const client = new UpstreamClient({
    baseURL: base,
    headers: { ...options.headers },
    ...(options.timeouts ? { timeouts: options.timeouts } : {}),
    ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
  });
  const allowedBetas = options.betas === 'all' ? undefined : new Set(options.betas ?? BEDROCK_BETAS);
  const claudeOnInvoke = (model: string) => options.claudeVia !== 'converse' && isBedrockClaude(model);
  // Claude's body requires `max_tokens`; Converse does not, and each model has its own default
  // and ceiling (a fixed 4096 would be a 400 on small Llamas), so it gets one only when configured.
  const messagesOptions = { defaultMaxTokens: options.defaultMaxTokens ?? 4096 };
  const converseOptions = options.defaultMaxTokens === undefined ? {} : { defaultMaxTokens: options.defaultMaxTokens };
  /** The `s3://` URIs one call may name: the provider's prefixes, narrowed by the caller's key's. */
  const storage = (call: CallContext) => storageUriCheck(options.storageUris, call.key.storageUris);
  const converseBody = (ir: IRRequest, call: CallContext) => guarded(converseUpstream.encodeRequest(ir, { ...converseOptions, storageUris: storage(call) }));

  /** Model ids with `:` (`…-v1:0`) and ARNs with `/` are one path segment, encoded. */
  const path = (model: string, action: string) => `/model/${encodeURIComponent(model)}/${action}`;

  /** POSTs `body` signed over its exact bytes; an error status is thrown as a `GatewayError`. */
  const post = async (route: string, body: Json, call: UpstreamCall, stream: boolean, extra: Record<string, string> = {}): Promise<UpstreamResult> => {
    // Serialized once, long strings (inline images) outlined; hashed and sent as the same pieces.
    const wire = await stringifyBody(body);
    const signed = await signer.headers(new URL(base + route), await payloadHash(wire));
    const result = await client.post(route, wire, {
      signal: call.signal,
      idleTimeoutMs: call.idleTimeoutMs,
      upstreamWait: call.upstreamWait,
      headers: { ...extra, ...signed, accept: stream ? EVENT_STREAM : 'application/json' },
    });
    if (result.status >= 400) throw await bedrockError(result);
    if (stream) await expectEventStream(result);
    return result;
  };
  const postJson = async (route: string, body: Json, call: UpstreamCall, extra: Record<string, string> = {}) => {
    const result = await post(route, body, call, false, extra);
    return { json: parseAnswer(await readText(result.body, undefined, result.upstreamWait), result.redact), headers: result.headers };
  };

  const guardrail = options.guardrail;
  /** Converse's `guardrailConfig`, added to every Converse body when a guardrail is configured. */
  const guarded = (body: Json): Json =>
    guardrail
      ? {
          ...body,
          guardrailConfig: {
            guardrailIdentifier: guardrail.identifier,
            guardrailVersion: guardrail.version,
            ...(guardrail.trace ? { trace: guardrail.trace } : {}),
          },
        }
      : body;
  /** The same guardrail on `invoke`, in headers. */
  const guardrailHeaders: Record<string, string> = guardrail
    ? {
        'x-amzn-bedrock-guardrailidentifier': guardrail.identifier,
        'x-amzn-bedrock-guardrailversion': guardrail.version,
        ...(guardrail.trace ? { 'x-amzn-bedrock-trace': guardrail.trace.toUpperCase() } : {}),
      }
    : {};

  const claudeBody = (ir: IRRequest) => invokeBody(messagesUpstream.encodeRequest({ ...ir, stream: false }, messagesOptions), []);

  async function* streamBatches(ir: IRRequest, call: CallContext): AsyncGenerator<readonly IRStreamEvent[]> {
    if (claudeOnInvoke(ir.model)) {
      const result = await post(path(ir.model, 'invoke-with-response-stream'), claudeBody(ir), call, true, guardrailHeaders);
      yield* eventStreamIR(result, messagesUpstream.streamDecoder(), anthropicEventOf);
      return;
    }
    const result = await post(path(ir.model, 'converse-stream'), converseBody(ir, call), call, true);
    yield* eventStreamIR(result, converseUpstream.streamDecoder());
  }

  return {
    type: 'bedrock',
    version: 2,
    catalogIds: bedrockCatalogIds,
    text: {
      nativeProtocols: ['messages'],
      nativeProtocolsOf: (model): readonly TextProtocol[] => (claudeOnInvoke(model.upstreamModel ?? model.id) ? ['messages'] : []),

      async passthrough({ body, headers }, call) {
        const model = upstreamId(body, call);
        const streaming = body.stream === true;
        const betas = bedrockBetas({ headers, body }, allowedBetas);
        checkSourceUris(body, storage(call));
        const result = await post(
          path(model, streaming ? 'invoke-with-response-stream' : 'invoke'),
          invokeBody(body, betas),
          call,
          streaming,
          guardrailHeaders,
        );
        if (!streaming) return { status: result.status, contentType: 'application/json', body: result.body, redact: result.redact };
        return { status: 200, contentType: 'text/event-stream; charset=utf-8', body: anthropicSse(result), redact: result.redact };
      },

      async countTokens(request, call) {
        const model = upstreamId(request.body, call);
        if (request.protocol !== 'messages' || !claudeOnInvoke(model)) return undefined;
        checkSourceUris(request.body, storage(call));
        return countClaudeTokens(postJson, model, request, bedrockBetas(request, allowedBetas), call);
      },

      streamBatches,

      stream(ir, call) {
        return eventsOf(streamBatches(ir, call));
      },

      async generate(ir, call) {
        if (claudeOnInvoke(ir.model))
          return messagesUpstream.decodeResponse((await postJson(path(ir.model, 'invoke'), claudeBody(ir), call, guardrailHeaders)).json);
        const { json } = await postJson(path(ir.model, 'converse'), converseBody(ir, call), call);
        return converseUpstream.decodeResponse(json);
      },
    },

    embeddings: bedrockEmbeddings((model, body, call) => postJson(path(model, 'invoke'), body, call)),

    moderation: {
      /** ApplyGuardrail: the guardrail's id (an ARN's `:` and `/` encoded) and version in the path, signed like every call. */
      async applyGuardrail({ guardrailIdentifier, guardrailVersion, source, content }, call) {
        const route = `/guardrail/${encodeURIComponent(guardrailIdentifier)}/version/${encodeURIComponent(guardrailVersion)}/apply`;
        return (await postJson(route, { source, content: content.map(({ text }) => ({ text: { text: text.text } })) }, { signal: call.signal })).json;
      },
    },

    close: () => client.close(),
  };
}

/** The upstream model id of a passthrough body (the deployment's), else the catalog entry's. */
function upstreamId(body: Record<string, unknown>, call: CallContext): string {
  return typeof body.model === 'string' ? body.model : (call.model.upstreamModel ?? call.model.id);
}
