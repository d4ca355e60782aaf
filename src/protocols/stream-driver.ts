import { isAbortError, toPublicError } from '../errors.js';
import type { EncodeContext, StreamEncoder } from './codec.js';
import type { IRStreamEvent } from './ir.js';

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
