import type { RouteContext } from '../http/route.js';
import { ANSWER_DECODERS } from '../protocols/answer-decoders.js';
import type { StreamTap, TextBody } from '../protocols/codec.js';
import type { IRResponse, IRStreamEvent } from '../protocols/ir.js';
import { decodedBatches } from '../providers/http/decoded-batches.js';
import { parseAnswer } from '../providers/http/get-json.js';
import { LineBoundedSseReader } from '../providers/http/json-call.js';
import { readText } from '../providers/http/upstream-client.js';
import type { CallContext, Provider } from '../providers/provider.js';
import { forwardClientBody } from './passthrough.js';

/*
 * Passthrough for a turn whose answer a stage transforms (an output guardrail): the client's body
 * goes upstream as on plain passthrough, so what the IR does not carry (unknown fields, Google's
 * `safetySettings`, the client's `anthropic-beta`, `previous_response_id` on a Responses upstream
 * that keeps state) still reaches it; the answer, in the client's own protocol, is decoded to the
 * IR by that protocol's decoder (`ANSWER_DECODERS`), for the stages to transform and the client
 * protocol's encoder to encode again.
 */

/** The whole answer, as the IR. */
export async function passthroughResponse(provider: Provider, tap: StreamTap, body: TextBody, context: RouteContext, call: CallContext): Promise<IRResponse> {
  const { reply } = await forwardClientBody(provider, tap, body, context, call);
  const text = await readText(reply.body, context.options.limits.jsonBodyBytes, call.upstreamWait);
  // A cut body, a proxy's page or an error sent with a 200 is a failure (`parseAnswer`).
  return ANSWER_DECODERS[tap.protocol].decodeResponse(parseAnswer(text, reply.redact));
}

/** The streamed answer as IR events, one batch per upstream read. */
export async function* passthroughBatches(
  provider: Provider,
  tap: StreamTap,
  body: TextBody,
  context: RouteContext,
  call: CallContext,
): AsyncGenerator<IRStreamEvent[]> {
  const { reply } = await forwardClientBody(provider, tap, body, context, call);
  const result = { body: reply.body, upstreamWait: call.upstreamWait, ...(reply.redact ? { redact: reply.redact } : {}) };
  yield* decodedBatches(result, new LineBoundedSseReader(), ANSWER_DECODERS[tap.protocol].streamDecoder());
}
