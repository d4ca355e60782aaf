import { jsonTextOf } from '../http/json-response.js';
import { type BodySource, bodySourceOf, pullResponse } from '../http/pull-body.js';
import { EventFold } from '../protocols/accumulate.js';
import { ANSWER_DECODERS } from '../protocols/answer-decoders.js';
import type { UpstreamCodec } from '../protocols/codec.js';
import type { IRResponse, IRStreamEvent, TextProtocol } from '../protocols/ir.js';
import { SseReader } from '../protocols/sse-parse.js';
import type { LedgerEnd, RequestLedger } from '../policy/request-ledger.js';

/**
 * Watches an answer on its way to the client and calls `onComplete` with it as an IR response
 * once it is whole: a JSON answer at once, a stream when its last byte left. Only a complete
 * answer is kept: a 200 that the ledger settled `ok`, that decoded to an answer with its finish
 * reason (a stream: to its terminal event, with no error frame and no cut). Usage is the ledger's, what the request
 * was charged for, since a stream may have carried none to the client (Chat without
 * `include_usage`). The client's bytes are never changed.
 */
export function captureAnswer(response: Response, protocol: TextProtocol, ledger: RequestLedger, onComplete: (answer: IRResponse) => void): Response {
  if (response.status !== 200) return response;
  const decoder = ANSWER_DECODERS[protocol];
  const keep = (answer: IRResponse | undefined) => {
    if (!answer) return;
    ledger.whenFinished((end) => {
      if (completed(end)) onComplete({ ...answer, usage: end.usage ?? answer.usage });
    });
  };
  const type = response.headers.get('content-type') ?? '';
  if (type.startsWith('application/json')) {
    const text = jsonTextOf(response);
    if (text !== undefined) keep(decodeJson(decoder, text));
    return response;
  }
  const source = type.startsWith('text/event-stream') ? bodySourceOf(response) : undefined;
  if (!source) return response;
  return pullResponse(watchedSource(source, decoder, keep), response.status, Object.fromEntries(response.headers));
}

function completed(end: LedgerEnd): boolean {
  return end.status === 'ok' && !end.cancelled;
}

function decodeJson(decoder: UpstreamCodec, text: string): IRResponse | undefined {
  try {
    return decoder.decodeResponse(JSON.parse(text));
  } catch {
    return undefined;
  }
}

/**
 * The stream's chunks passed on as they are, each also decoded (SSE → the protocol's stream
 * decoder → folded into one answer). A decoding failure (an error frame, a cut) only stops the
 * watching: the client's stream goes on untouched.
 */
function watchedSource(source: BodySource, codec: UpstreamCodec, keep: (answer: IRResponse | undefined) => void): BodySource {
  const reader = new SseReader();
  const decoder = codec.streamDecoder();
  const fold = new EventFold();
  const events: IRStreamEvent[] = [];
  let broken = false;
  const onMessage = (message: Parameters<typeof decoder.push>[0]) => decoder.push(message, events);
  const drain = () => {
    for (const event of events) fold.push(event);
    events.length = 0;
  };
  return {
    async pull() {
      const chunk = await source.pull();
      if (broken) return chunk;
      try {
        if (chunk === null) {
          reader.end(onMessage);
          decoder.end(events);
          drain();
          broken = true;
          keep(decoder.finished ? fold.response() : undefined);
        } else {
          reader.feed(typeof chunk === 'string' ? Buffer.from(chunk) : chunk, onMessage);
          drain();
        }
      } catch {
        broken = true;
      }
      return chunk;
    },
    cancel() {
      broken = true;
      source.cancel();
    },
  };
}
