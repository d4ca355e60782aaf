import { GatewayError } from '../../errors.js';
import { addHeaders } from '../../http/add-headers.js';
import { jsonTextResponse } from '../../http/json-response.js';
import { ContentCapture } from '../../logs/content-capture.js';
import type { RouteContext } from '../../http/route.js';
import { accumulateStream } from '../../protocols/accumulate.js';
import type { ClientCodec, EncodeContext } from '../../protocols/codec.js';
import type { IRRequest, IRResponse, IRStreamEvent } from '../../protocols/ir.js';
import { runWithFallback } from '../../policy/fallback.js';
import { isReplaySafe } from '../../policy/replay-safety.js';
import { withLedger } from '../../policy/ledger-frame.js';
import { stickyKeyOf } from '../../policy/sticky-key.js';
import type { CallContext, Provider } from '../../providers/provider.js';
import { modelOnDeployment, type Deployment, type RouteOrder } from '../../routing/deployments.js';
import { routeOrderOf } from '../../routing/route-headers.js';
import { takesReasoning } from '../../routing/reasoning-support.js';
import { batchesOf, eventsOf } from '../../protocols/event-batches.js';
import { passthroughText } from '../passthrough.js';
import { passthroughBatches, passthroughResponse } from '../decoded-passthrough.js';
import { translatedStream } from '../translated-stream.js';
import { readTextRequest } from '../text-request.js';
import { callContext, routePlan } from '../upstream-call.js';
import { checkModelRules } from '../model-rules.js';
import { speaksNatively } from '../../providers/speaks-natively.js';
import type { AnswerTransform } from '../../plugins/text-stage.js';
import { PipelineTurn } from './turn.js';
import { runStages, stagesOf } from './stages.js';
import { dropHint } from '../../protocols/upstream-params.js';
import { noteIgnoredFields } from '../../protocols/ignored-fields.js';
import { droppedNotes } from '../dropped-notes.js';

/** The route handler of a client protocol's generation endpoint. */
export function textRoute(codec: ClientCodec): (context: RouteContext) => Promise<Response> {
  return (context) => handleText(context, codec);
}

/**
 * The text pipeline shared by the client protocols: read and validate the body, resolve the model
 * within the key's scope, apply the model's rules and the key's limits, then run the stages
 * (conversation state, the plugins' `wrapText`, the response cache; `stages.ts`) around the
 * deployments, tried in turn (sticky by prompt cache key) until one answers, each attempt either
 * passing the body through to an upstream that speaks the client's protocol, or translating
 * through the IR. Whatever ends the request settles its ledger exactly once.
 */
async function handleText(context: RouteContext, codec: ClientCodec): Promise<Response> {
  const { body, text, model } = await readTextRequest(context, codec);
  checkModelRules(model, body);
  const order = routeOrderOf(context.request);

  return withLedger(context, { model, endpoint: codec.endpoint, kind: 'text', stream: body.stream === true }, async (ledger) => {
    const turn = new PipelineTurn(context, codec, model, ledger, { parsed: body, text });
    const capture = context.options.captureContent;
    // The prompt as the stages left it (masked by a guardrail, a conversation expanded): the
    // client's text while it is still what goes upstream.
    if (capture) ledger.content = new ContentCapture(() => turn.textBody.text ?? JSON.stringify(turn.body), capture.maxBytes);
    const response = await runStages(stagesOf(context.options.plugins), turn, () => answer(turn, order));
    return addHeaders(ledger.content ? ledger.content.watch(response, codec.protocol) : response, ledger.headers);
  });
}

/** Tries the deployments in the order the policy picks; the first to answer wins. */
async function answer(turn: PipelineTurn, order: RouteOrder): Promise<Response> {
  const { context, ledger, body } = turn;
  const { health, retry } = context.options.policies;
  const route = routePlan(context, turn.model, stickyKeyOf(body, turn.key), order);
  ledger.routed(route);
  const { result } = await runWithFallback({
    plan: route.plan,
    policy: retry,
    health,
    replaySafe: isReplaySafe(turn.request, body),
    signal: turn.signal,
    firstByteTimeoutMs: turn.model.firstByteTimeoutMs,
    onAttempt: (outcome) => ledger.attempted(outcome),
    attempt: (deployment, number, attemptSignal) => {
      ledger.trying(deployment, number);
      return attempt(turn, deployment, attemptSignal);
    },
  });
  return result;
}

/**
 * One attempt on one deployment. It resolves once the answer's first byte is secured (a whole
 * JSON answer, a stream's headers or first event), so a failure before that can be retried.
 * A deployment that speaks the client's protocol gets the body on passthrough; when a stage
 * transforms the answer, that answer is decoded to the IR (`decoded-passthrough.ts`), and
 * encoded again once transformed.
 */
async function attempt(turn: PipelineTurn, deployment: Deployment, signal: AbortSignal): Promise<Response> {
  const { context, codec: endpoint, ledger, model: publicModel, body, transforms } = turn;
  const model = modelOnDeployment(publicModel, deployment);
  const provider = context.options.providers[deployment.provider]!;
  const call = callContext(context, model, signal);
  if (speaksNatively(provider, model, endpoint.protocol)) {
    const sent = endpoint.forPassthrough?.(turn.textBody) ?? turn.textBody;
    if (transforms.length === 0) return passthroughText(provider, endpoint.tap, sent, context, call, ledger);
    return encodedAnswer(turn, {
      stream: body.stream === true,
      response: () => passthroughResponse(provider, endpoint.tap, sent, context, call),
      batches: () => passthroughBatches(provider, endpoint.tap, sent, context, call),
      notes: () => ({}),
    });
  }

  const ir = endpoint.decodeRequest(body, deployment.upstreamModel);
  ir.droppedParams = [];
  ir.strictParams = context.key.strictParams ?? publicModel.strictParams ?? false;
  noteIgnoredFields(ir, body, endpoint.readFields);
  if (ir.reasoning && !takesReasoning(model, deployment.upstreamModel)) {
    dropHint(ir, 'reasoning', 'the model does not reason');
    delete ir.reasoning;
  }
  return encodedAnswer(turn, {
    stream: ir.stream,
    response: () => generate(provider, ir, call),
    batches: () => providerBatches(provider, ir, call),
    notes: () => droppedNotes(ir),
  });
}

/** Where an answer the gateway encodes for the client comes from, as the IR. */
interface IRAnswer {
  stream: boolean;
  response(): Promise<IRResponse>;
  batches(): AsyncIterable<readonly IRStreamEvent[]>;
  /** Headers about the request as sent (the parameters dropped), read once the answer began. */
  notes(): Record<string, string>;
}

/** The answer through the stages' transforms, encoded in the client's protocol, its ledger settled. */
async function encodedAnswer(turn: PipelineTurn, answer: IRAnswer): Promise<Response> {
  const { context, codec: endpoint, ledger, model: publicModel, body, transforms } = turn;
  const { options } = context;
  const encodeContext: EncodeContext = {
    model: publicModel.id,
    request: body,
    requestId: context.requestId,
    onStreamError: (error) => {
      if (error.status >= 500) options.logger.warn('stream failed', { requestId: context.requestId, status: error.status, message: error.message });
    },
  };
  if (!answer.stream) {
    const response = await transformedAnswer(await answer.response(), transforms);
    const encoded = endpoint.encodeResponse(response, encodeContext);
    const answerText = JSON.stringify(encoded);
    ledger.finish({
      status: 'ok',
      usage: response.usage,
      finishReason: response.finishReason,
      responseId: String(encoded.id ?? encoded.responseId),
      answerText,
    });
    return addHeaders(jsonTextResponse(answerText, 200, { 'content-type': 'application/json' }), answer.notes());
  }
  // The upstream encoder runs when the stream starts, before the answer's headers are written.
  return translatedStream(
    transformedStream(answer.batches(), transforms),
    endpoint.streamEncoder(encodeContext),
    encodeContext,
    ledger,
    context.signal,
    answer.notes,
  );
}

/** The stages' transforms of a whole answer, innermost stage's first. */
async function transformedAnswer(response: IRResponse, transforms: readonly AnswerTransform[]): Promise<IRResponse> {
  let answer = response;
  for (let index = transforms.length - 1; index >= 0; index--) {
    const transform = transforms[index]!.response;
    if (transform) answer = await transform(answer);
  }
  return answer;
}

/** The stages' transforms of a stream, innermost stage's nearest the upstream. */
function transformedStream(batches: AsyncIterable<readonly IRStreamEvent[]>, transforms: readonly AnswerTransform[]): AsyncIterable<readonly IRStreamEvent[]> {
  let stream = batches;
  for (let index = transforms.length - 1; index >= 0; index--) {
    const transform = transforms[index]!.stream;
    if (transform) stream = transform(stream);
  }
  return stream;
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
