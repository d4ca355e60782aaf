import { isAbortError, toPublicError, type GatewayError } from '../errors.js';
import type { EncodeContext } from './codec.js';
import type { IRStreamEvent } from './ir.js';

/** One client protocol's stream state machine: IR events in, SSE text out. */
export interface StreamEncoder {
  /** SSE frames (possibly several, concatenated) for one IR event; '' when there is nothing to send. */
  push(event: IRStreamEvent): string;
  /** True once the protocol's terminal frames have been produced. */
  readonly finished: boolean;
  /** The protocol's in-stream error frames, for a failure after the stream started. */
  fail(error: GatewayError): string;
}

/**
 * Drives an encoder over an IR stream. The HTTP status is already 200 when a stream fails, so a
 * failure (upstream error, an encoder bug, or a stream that ends without `finish`) becomes the
 * protocol's error frames: a cut stream never looks like a clean success to the client.
 */
export async function* driveStreamEncoder(events: AsyncIterable<IRStreamEvent>, encoder: StreamEncoder, ctx: EncodeContext): AsyncGenerator<string> {
  try {
    for await (const event of events) {
      // After the terminal frames, keep draining so wrappers around the upstream run to the end.
      if (encoder.finished) continue;
      const frames = encoder.push(event);
      if (frames !== '') yield frames;
    }
    if (!encoder.finished) throw new Error('The upstream stream ended without a finish event.');
  } catch (error) {
    // The client already has its complete answer, or it left: nothing useful can be sent.
    if (encoder.finished || isAbortError(error)) return;
    const publicError = toPublicError(error);
    ctx.onStreamError?.(publicError);
    yield encoder.fail(publicError);
  }
}
