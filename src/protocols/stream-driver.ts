import { isAbortError, toPublicError } from '../errors.js';
import type { EncodeContext, StreamEncoder } from './codec.js';
import type { IRStreamEvent } from './ir.js';

/**
 * How a stream's encoder ends when the stream does not: the HTTP status is already 200, so a
 * failure (upstream error, an encoder bug, or a stream that ends without `finish`) becomes the
 * protocol's error frames, and a cut stream never looks like a clean success to the client.
 * Shared by the gateway's stream path (`api/translated-stream.ts`) and `driveStreamEncoder`.
 */
export function failureFrames(encoder: StreamEncoder, error: unknown, context: EncodeContext): string | undefined {
  // The client already has its complete answer, or it left: nothing useful can be sent.
  if (encoder.finished || isAbortError(error)) return undefined;
  const publicError = toPublicError(error);
  context.onStreamError?.(publicError);
  return encoder.fail(publicError);
}

/** What a stream that ended before its finish event failed with. */
export function unfinishedStream(): Error {
  return new Error('The upstream stream ended without a finish event.');
}

/** Drives an encoder over an IR stream, one event at a time (the codecs' `encode*Stream` helpers). */
export async function* driveStreamEncoder(events: AsyncIterable<IRStreamEvent>, encoder: StreamEncoder, ctx: EncodeContext): AsyncGenerator<string> {
  try {
    for await (const event of events) {
      // After the terminal frames, keep draining so wrappers around the upstream run to the end.
      if (encoder.finished) continue;
      const frames = encoder.push(event);
      if (frames !== '') yield frames;
    }
    if (!encoder.finished) throw unfinishedStream();
  } catch (error) {
    const frames = failureFrames(encoder, error, ctx);
    if (frames !== undefined) yield frames;
  }
}
