import { GatewayError, isGatewayError } from '../errors.js';
import { addHeaders } from '../http/add-headers.js';
import { jsonTextResponse } from '../http/json-response.js';
import { ContentCapture } from '../logs/content-capture.js';
import type { RouteContext } from '../http/route.js';
import { accumulateStream } from '../protocols/accumulate.js';
import type { ClientCodec, EncodeContext, TextBody } from '../protocols/codec.js';
import type { IRRequest, IRResponse, IRStreamEvent } from '../protocols/ir.js';
import { admitRequest } from '../policy/admission.js';
import { runWithFallback } from '../policy/fallback.js';
import { isReplaySafe } from '../policy/replay-safety.js';
import { RequestLedger } from '../policy/request-ledger.js';
import { stickyKeyOf } from '../policy/sticky-key.js';
import type { CallContext, Provider } from '../providers/provider.js';
import type { ModelEntry } from '../routing/model.js';
import { modelOnDeployment, type Deployment, type RouteOrder } from '../routing/deployments.js';
import { routeOrderOf } from '../routing/route-headers.js';
import { takesReasoning } from '../routing/reasoning-support.js';
import { batchesOf, eventsOf } from '../protocols/event-batches.js';
import { passthroughText } from './passthrough.js';
import { translatedStream } from './translated-stream.js';
import { readTextRequest } from './text-request.js';
import { callContext, routePlan } from './upstream-call.js';
import { conversationOf, type Conversation } from './conversation-state.js';
import { consultCache } from '../cache/text-cache.js';
import { checkModelRules } from './model-rules.js';
import { dropHint } from '../protocols/upstream-params.js';
import { noteIgnoredFields } from '../protocols/ignored-fields.js';
import { droppedNotes } from './dropped-notes.js';

/** The route handler of a client protocol's generation endpoint. */
export function textRoute(codec: ClientCodec): (context: RouteContext) => Promise<Response> {
  return (context) => handleText(context, codec);
}

/**
 * The text pipeline shared by the client protocols: read and validate the body, resolve the model
 * within the key's scope, apply the model's rules and the key's limits, then try the model's
 * deployments in turn (sticky by prompt cache key) until one answers, each attempt either
 * passing the body through to an upstream that speaks the client's protocol, or translating
 * through the IR. Whatever ends the request settles its ledger exactly once.
 */
async function handleText(context: RouteContext, endpoint: ClientCodec): Promise<Response> {
  const read = await readTextRequest(context, endpoint);
  const { model, text } = read;
  let body = read.body;
  checkModelRules(model, body);
  const order = routeOrderOf(context.request);

  const ledger = new RequestLedger(context, model, endpoint.endpoint, 'text', body.stream === true, await admitRequest(context, model));
  const capture = context.options.captureContent;
  if (capture) ledger.content = new ContentCapture(text, capture.maxBytes);
  try {
    let conversation: Conversation | undefined;
    // The client's own text goes upstream on passthrough, unless the body was rebuilt here.
    let clientText: string | undefined = text;
    if (endpoint.storesConversations) {
      conversation = await conversationOf(context, model, body);
      if (conversation && conversation.body !== body) {
        body = conversation.body;
        clientText = undefined;
      }
    }
    // An exact repeat may be answered from the response cache; a fresh answer may be kept there.
    const cached = await consultCache(context, endpoint, model, body, ledger);
    const response = cached.hit ?? cached.keep(await answer(context, endpoint, model, { parsed: body, text: clientText }, ledger, order));
    const recorded = conversation ? await conversation.record(response, ledger) : response;
    return addHeaders(ledger.content ? ledger.content.watch(recorded, endpoint.protocol) : recorded, ledger.headers);
  } catch (error) {
    ledger.finish({ status: 'error', error, cancelled: context.signal.aborted, ...(context.signal.aborted ? { httpStatus: 499 } : {}) });
    if (isGatewayError(error)) Object.assign(error.headers, ledger.headers);
    throw error;
  }
}

/** Tries the deployments in the order the policy picks; the first to answer wins. */
async function answer(
  context: RouteContext,
  endpoint: ClientCodec,
  model: ModelEntry,
  requestBody: TextBody,
  ledger: RequestLedger,
  order: RouteOrder,
): Promise<Response> {
  const { options, request, key, signal } = context;
  const body = requestBody.parsed;
  const { health, retry } = options.policies;
  const route = routePlan(context, model, stickyKeyOf(body, key), order);
  ledger.routed(route);
  const { result } = await runWithFallback({
    plan: route.plan,
    policy: retry,
    health,
    replaySafe: isReplaySafe(request, body),
    signal,
    firstByteTimeoutMs: model.firstByteTimeoutMs,
    onAttempt: (outcome) => ledger.attempted(outcome),
    attempt: (deployment, number, attemptSignal) => {
      ledger.trying(deployment, number);
      return attempt(context, endpoint, model, deployment, requestBody, ledger, attemptSignal);
    },
  });
  return result;
}

/**
 * One attempt on one deployment. It resolves once the answer's first byte is secured (a whole
 * JSON answer, a stream's headers or first event), so a failure before that can be retried.
 */
async function attempt(
  context: RouteContext,
  endpoint: ClientCodec,
  publicModel: ModelEntry,
  deployment: Deployment,
  requestBody: TextBody,
  ledger: RequestLedger,
  signal: AbortSignal,
): Promise<Response> {
  const { options } = context;
  const body = requestBody.parsed;
  const model = modelOnDeployment(publicModel, deployment);
  const provider = options.providers[deployment.provider]!;
  const call = callContext(context, model, signal);
  const native = provider.text?.nativeProtocolsOf?.(model) ?? provider.text?.nativeProtocols;
  if (provider.text?.passthrough && native?.includes(endpoint.protocol)) {
    return passthroughText(provider, endpoint.tap, endpoint.forPassthrough?.(requestBody) ?? requestBody, context, call, ledger);
  }

  const ir = endpoint.decodeRequest(body, deployment.upstreamModel);
  ir.droppedParams = [];
  ir.strictParams = context.key.strictParams ?? publicModel.strictParams ?? false;
  noteIgnoredFields(ir, body, endpoint.readFields);
  if (ir.reasoning && !takesReasoning(model, deployment.upstreamModel)) {
    dropHint(ir, 'reasoning', 'the model does not reason');
    delete ir.reasoning;
  }
  const encodeContext: EncodeContext = {
    model: publicModel.id,
    request: body,
    requestId: context.requestId,
    onStreamError: (error) => {
      if (error.status >= 500) options.logger.warn('stream failed', { requestId: context.requestId, status: error.status, message: error.message });
    },
  };
  if (!ir.stream) {
    const response = await generate(provider, ir, call);
    const encoded = endpoint.encodeResponse(response, encodeContext);
    const answerText = JSON.stringify(encoded);
    ledger.finish({
      status: 'ok',
      usage: response.usage,
      finishReason: response.finishReason,
      responseId: String(encoded.id ?? encoded.responseId),
      answerText,
    });
    return addHeaders(jsonTextResponse(answerText, 200, { 'content-type': 'application/json' }), droppedNotes(ir));
  }
  // The upstream encoder runs when the stream starts, before the answer's headers are written.
  return translatedStream(providerBatches(provider, ir, call), endpoint.streamEncoder(encodeContext), encodeContext, ledger, context.signal, () =>
    droppedNotes(ir),
  );
}

/** A whole answer: the provider's own, or its stream accumulated. */
export async function generate(provider: Provider, ir: IRRequest, call: CallContext): Promise<IRResponse> {
  if (provider.text?.generate) return provider.text.generate(ir, call);
  return accumulateStream(providerStream(provider, ir, call));
}

/** The provider's stream, one batch of events per upstream read where the provider reads them so. */
function providerBatches(provider: Provider, ir: IRRequest, call: CallContext): AsyncIterable<readonly IRStreamEvent[]> {
  return provider.text?.streamBatches?.(ir, call) ?? batchesOf(providerStream(provider, ir, call));
}

function providerStream(provider: Provider, ir: IRRequest, call: CallContext): AsyncIterable<IRStreamEvent> {
  if (provider.text?.streamBatches) return eventsOf(provider.text.streamBatches(ir, call));
  if (!provider.text?.stream) {
    throw new GatewayError({ status: 500, message: `The provider of model \`${call.model.id}\` cannot generate text.` });
  }
  return provider.text.stream(ir, call);
}
