import { YIELD_EVERY_BYTES, yieldToLoop } from './yield-to-loop.js';

/**
 * A streamed binary body (audio, video) from an async iterable, pull-based: a chunk is read from
 * the source only when the transport asks for one, so a slow client slows the upstream instead
 * of filling memory, and cancelling (a client that left) returns the iterator, which releases
 * the upstream call. A source that fails midway errors the stream and cuts the connection: the
 * client sees a cut transfer, never a short file that looks complete, nor one that never ends.
 * Every `YIELD_EVERY_BYTES` the loop turns before the next chunk: while a fast client reads a
 * source that is always ready (local speech, a cached video), each pull resolves as a microtask,
 * and no other request was served until the client stopped reading.
 */
export function streamBody(source: AsyncIterable<Uint8Array>, serverContext: unknown): ReadableStream<Uint8Array> {
  const iterator = source[Symbol.asyncIterator]();
  let sinceYield = 0;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          if (sinceYield >= YIELD_EVERY_BYTES) {
            sinceYield = 0;
            await yieldToLoop();
          }
          // Skip empty chunks (an encoder may produce none for a short input).
          for (;;) {
            const { value, done } = await iterator.next();
            if (done) {
              controller.close();
              return;
            }
            if (value.byteLength > 0) {
              sinceYield += value.byteLength;
              controller.enqueue(value);
              return;
            }
          }
        } catch (error) {
          // Under Node the reset connection tells the client; closing rather than erroring the
          // stream then keeps @whatwg-node from printing the error past the gateway's logger.
          if (cutNodeResponse(serverContext)) controller.close();
          else controller.error(error);
        }
      },
      async cancel() {
        await iterator.return?.();
      },
    },
    { highWaterMark: 0 },
  );
}

/**
 * Under Node, @whatwg-node leaves a response whose body stream errored open, and the client waits
 * for an end that never comes; destroying the host's `ServerResponse` (every Node adapter passes
 * it as `serverContext.res`) resets the connection instead. Bun and Deno cut it themselves.
 * Returns whether there was a Node response to cut.
 */
function cutNodeResponse(serverContext: unknown): boolean {
  const res = (serverContext as { res?: { destroy?: () => void; destroyed?: boolean } } | undefined)?.res;
  if (!res || typeof res.destroy !== 'function') return false;
  if (!res.destroyed) res.destroy();
  return true;
}
