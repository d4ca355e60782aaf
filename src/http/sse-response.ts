/**
 * Streams SSE frames to the client. Pull-based: a frame is produced only when the transport asks
 * for one, so a slow reader slows the upstream instead of filling memory; cancelling the body
 * (a client that left) returns the frame iterator, which releases the upstream call.
 *
 * Frame producers (the protocol encoders) turn failures into their protocol's error frame; an
 * error that still escapes here is a bug, and the stream is errored so it never looks complete.
 */
export function sseResponse(frames: AsyncIterable<string>, headers?: Record<string, string>): Response {
  const encoder = new TextEncoder();
  const iterator = frames[Symbol.asyncIterator]();
  const body = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          const { value, done } = await iterator.next();
          if (done) controller.close();
          else controller.enqueue(encoder.encode(value));
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
  return new Response(body, {
    status: 200,
    headers: {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      // Tells nginx-style proxies not to buffer the stream.
      'x-accel-buffering': 'no',
      ...headers,
    },
  });
}
