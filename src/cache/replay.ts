import { addHeaders } from '../http/add-headers.js';
import { jsonTextResponse } from '../http/json-response.js';
import type { RouteContext } from '../http/route.js';
import { newId, unixSeconds } from '../ids.js';
import type { ClientCodec, EncodeContext } from '../protocols/codec.js';
import type { IRResponse, IRStreamEvent, TextProtocol } from '../protocols/ir.js';
import type { RequestLedger } from '../policy/request-ledger.js';
import type { ModelEntry } from '../routing/model.js';
import { translatedStream } from '../api/translated-stream.js';

/** The prefix of each protocol's answer ids; Gemini's `responseId` has none. */
const ID_PREFIXES: Record<TextProtocol, string> = { chat: 'chatcmpl-', responses: 'resp_', messages: 'msg_', gemini: '' };

/**
 * A cache hit as the client's protocol answers it: a JSON body from the codec's
 * `encodeResponse`, or an SSE stream from its `streamEncoder` fed with the answer's events, in
 * one write. The answer gets a fresh id and creation time; its content, finish reason and usage
 * are the original call's. The ledger is marked cached and settled as any answer's.
 */
export async function replayAnswer(
  context: RouteContext,
  codec: ClientCodec,
  model: ModelEntry,
  body: Record<string, unknown>,
  stored: IRResponse,
  ledger: RequestLedger,
  headers: Record<string, string>,
): Promise<Response> {
  // A fresh id with the protocol's prefix (the encoders keep it as it is): two answers never share one.
  const response: IRResponse = { ...stored, id: newId(ID_PREFIXES[codec.protocol]), created: unixSeconds() };
  const encodeContext: EncodeContext = { model: model.id, request: body, requestId: context.requestId };
  ledger.markCached();
  if (body.stream === true) {
    return translatedStream(oneBatch(replayEvents(response)), codec.streamEncoder(encodeContext), encodeContext, ledger, context.signal, headers);
  }
  const encoded = codec.encodeResponse(response, encodeContext);
  const answerText = JSON.stringify(encoded);
  ledger.finish({ status: 'ok', usage: response.usage, finishReason: response.finishReason, responseId: String(encoded.id ?? encoded.responseId), answerText });
  return addHeaders(jsonTextResponse(answerText, 200, { 'content-type': 'application/json' }), headers);
}

/**
 * The IR events of a whole answer, as a stream decoder would have produced them: `start` (with
 * the usage, for protocols that announce input tokens first), each part's deltas in order, then
 * `finish` with the usage.
 */
export function replayEvents(response: IRResponse): IRStreamEvent[] {
  const events: IRStreamEvent[] = [{ type: 'start', id: response.id, model: response.model, created: response.created, usage: response.usage }];
  for (const part of response.content) {
    switch (part.type) {
      case 'text':
        events.push({ type: 'text_delta', text: part.text });
        break;
      case 'refusal':
        events.push({ type: 'refusal_delta', text: part.refusal });
        break;
      case 'reasoning':
        if (part.text !== '') events.push({ type: 'reasoning_delta', text: part.text });
        events.push({
          type: 'reasoning_end',
          ...(part.signature !== undefined ? { signature: part.signature } : {}),
          ...(part.redacted !== undefined ? { redacted: part.redacted } : {}),
          ...(part.encrypted !== undefined ? { encrypted: part.encrypted } : {}),
          ...(part.thoughtSignature !== undefined ? { thoughtSignature: part.thoughtSignature } : {}),
        });
        break;
      case 'tool_call':
        events.push({ type: 'tool_call_start', id: part.id, name: part.name });
        if (part.arguments !== '') events.push({ type: 'tool_call_delta', arguments: part.arguments });
        break;
    }
  }
  events.push({
    type: 'finish',
    reason: response.finishReason,
    ...(response.stopSequence !== undefined ? { stopSequence: response.stopSequence } : {}),
    usage: response.usage,
  });
  return events;
}

async function* oneBatch(events: IRStreamEvent[]): AsyncGenerator<readonly IRStreamEvent[]> {
  yield events;
}
