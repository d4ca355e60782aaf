import { isGatewayError } from '../../errors.js';
import type { StreamDecoder } from '../../protocols/codec.js';
import type { IRStreamEvent } from '../../protocols/ir.js';
import type { SseMessage } from '../../protocols/sse-parse.js';
import { transportError, type UpstreamResult } from './upstream-client.js';
import { redactedError } from './upstream-error.js';

/**
 * Splits a stream body into the messages a `StreamDecoder` reads (SSE events, AWS event-stream
 * messages): `feed` hands each whole message of one read to `onMessage` before it returns; `end`
 * is told the bytes ended.
 */
export interface StreamFraming {
  feed(chunk: Uint8Array, onMessage: (message: SseMessage) => void): void;
  end(onMessage: (message: SseMessage) => void): void;
}

/**
 * The IR events `decoder` reads from a stream body, one batch per upstream read: each read is
 * framed and decoded in one synchronous pass, with no promise per message. Leaving the loop early
 * (client gone) destroys the upstream body, which frees the socket.
 */
export async function* decodedBatches(
  result: Pick<UpstreamResult, 'upstreamWait' | 'redact'> & { body: AsyncIterable<Uint8Array> },
  framing: StreamFraming,
  decoder: StreamDecoder,
): AsyncGenerator<IRStreamEvent[]> {
  let batch: IRStreamEvent[] = [];
  const decode = (message: SseMessage) => decoder.push(message, batch);
  // The wait for the first events is the upstream's (the gateway answers once they are in).
  let waitingSince = result.upstreamWait ? performance.now() : undefined;
  try {
    for await (const chunk of result.body) {
      framing.feed(chunk, decode);
      if (batch.length > 0) {
        if (waitingSince !== undefined) {
          result.upstreamWait!.waited(performance.now() - waitingSince);
          waitingSince = undefined;
        }
        yield batch;
        batch = [];
      }
      // The terminal event is in: what follows (a `[DONE]` after a usage chunk) is not needed.
      if (decoder.finished) return;
    }
    framing.end(decode);
    decoder.end(batch);
    if (batch.length > 0) yield batch;
  } catch (error) {
    const failure = transportError(error);
    // An upstream error event's message reaches the client: not with the credentials it quotes.
    throw isGatewayError(failure) ? redactedError(failure, result.redact) : failure;
  } finally {
    // A passthrough reply's body may be any iterable; an undici body is destroyed here.
    const body = result.body as Partial<Pick<UpstreamResult['body'], 'destroyed' | 'destroy'>>;
    if (body.destroy && !body.destroyed) body.destroy();
  }
}
