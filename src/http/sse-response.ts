/** The headers of every event stream: no caching, and no buffering by nginx-style proxies. */
export const SSE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  'x-accel-buffering': 'no',
};

/** Frames batched into one write stop growing past this many characters. */
const MAX_BATCH = 64 * 1024;

/** Resolves once the event loop turns (after pending I/O callbacks): frames not ready by then are not ready now. */
const TURN = Symbol('turn');
const nextTurn = () => new Promise<typeof TURN>((resolve) => setImmediate(resolve, TURN));

/**
 * Streams SSE frames to the client. Pull-based: frames are produced only when the transport asks
 * for them, so a slow reader slows the upstream instead of filling memory; cancelling the body
 * (a client that left) returns the frame iterator, which releases the upstream call.
 *
 * Frames that are ready together (an encoder's several frames for one upstream event, or a burst
 * of upstream chunks read at once) leave in one write: the first frame is awaited, the following
 * ones only while they come without waiting for I/O. A frame that is not ready is kept for the
 * next pull, so a paced stream still sends each frame as soon as it exists.
 *
 * Frame producers (the protocol encoders) turn failures into their protocol's error frame; an
 * error that still escapes here is a bug, and the stream is errored so it never looks complete.
 */
export function sseResponse(frames: AsyncIterable<string>, headers?: Record<string, string>): Response {
  const encoder = new TextEncoder();
  const iterator = frames[Symbol.asyncIterator]();
  let pending: Promise<IteratorResult<string>> | undefined;
  const body = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        let text = '';
        try {
          const first = await (pending ?? iterator.next());
          pending = undefined;
          if (first.done) {
            controller.close();
            return;
          }
          text = first.value;
          const turn = nextTurn();
          while (text.length < MAX_BATCH) {
            const next = iterator.next();
            const ready = await Promise.race([next, turn]);
            if (ready === TURN) {
              next.catch(() => {}); // awaited again by the next pull
              pending = next;
              break;
            }
            if (ready.done) {
              controller.enqueue(encoder.encode(text));
              controller.close();
              return;
            }
            text += ready.value;
          }
          controller.enqueue(encoder.encode(text));
        } catch (error) {
          if (text) controller.enqueue(encoder.encode(text));
          controller.error(error);
        }
      },
      async cancel() {
        pending = undefined;
        await iterator.return?.();
      },
    },
    { highWaterMark: 0 },
  );
  return new Response(body, { status: 200, headers: { ...SSE_HEADERS, ...headers } });
}
