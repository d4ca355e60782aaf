/**
 * A streamed binary body (audio, video) from an async iterable, pull-based: a chunk is read from
 * the source only when the transport asks for one, so a slow client slows the upstream instead
 * of filling memory, and cancelling (a client that left) returns the iterator, which releases
 * the upstream call. A source that fails midway errors the stream: the client sees a cut
 * transfer, never a short file that looks complete.
 */
export function streamBody(source: AsyncIterable<Uint8Array>): ReadableStream<Uint8Array> {
  const iterator = source[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          // Skip empty chunks (an encoder may produce none for a short input).
          for (;;) {
            const { value, done } = await iterator.next();
            if (done) {
              controller.close();
              return;
            }
            if (value.byteLength > 0) {
              controller.enqueue(value);
              return;
            }
          }
        } catch (error) {
          controller.error(error);
        }
      },
      async cancel() {
        await iterator.return?.();
      },
    },
    { highWaterMark: 0 },
  );
}
