import { isAbortError } from '../errors.js';
import { type BodySource, pullResponse } from '../http/pull-body.js';
import { SSE_HEADERS } from '../http/sse-response.js';
import type { EncodeContext, StreamEncoder } from '../protocols/codec.js';
import { mergeUsage, type IRStreamEvent, type IRUsage } from '../protocols/ir.js';
import { failureFrames, unfinishedStream } from '../protocols/stream-driver.js';
import type { RequestLedger } from '../policy/request-ledger.js';

/**
 * A translated answer as the client's SSE stream, one pass per upstream read: the events of one
 * batch (what one upstream read decoded to) have their usage noted and are encoded by the client
 * protocol's encoder, and the frames leave in one write. No promise or generator per event.
 *
 * It waits for the first batch before answering, so an upstream that fails at once gets its own
 * HTTP status and can fall back. After that the status is 200: a failure (upstream error, a
 * stream that ends without its finish event, a bug) becomes the protocol's error frames, so a
 * cut stream never looks complete. The ledger is settled exactly once, however it ends:
 * finished, failed, or left by the client (charged for what was produced). `headers` may be a
 * function, read once the first batch arrived: what the upstream encoder noted by then (the
 * parameters it dropped) can be said in them.
 */
export async function translatedStream(
  batches: AsyncIterable<readonly IRStreamEvent[]>,
  encoder: StreamEncoder,
  context: EncodeContext,
  ledger: RequestLedger,
  signal: AbortSignal,
  headers: Record<string, string> | (() => Record<string, string>),
): Promise<Response> {
  const iterator = batches[Symbol.asyncIterator]();
  let pending: IteratorResult<readonly IRStreamEvent[]> | undefined = await iterator.next();
  let usage: IRUsage = {};
  let finishReason: string | undefined;
  let responseId: string | undefined;
  let done = false;

  const settle = (failure?: unknown) => {
    const cancelled = signal.aborted || (failure !== undefined && isAbortError(failure));
    ledger.finish({
      status: finishReason !== undefined && failure === undefined ? 'ok' : 'error',
      usage,
      ...(finishReason ? { finishReason } : {}),
      ...(responseId ? { responseId } : {}),
      ...(failure !== undefined && !cancelled ? { error: failure } : {}),
      ...(cancelled ? { cancelled: true } : {}),
    });
  };

  const encode = (batch: readonly IRStreamEvent[]): string => {
    let frames = '';
    for (const event of batch) {
      if (event.type === 'start') {
        ledger.firstByte();
        responseId = event.id;
      }
      if (event.type === 'start' || event.type === 'usage' || event.type === 'finish') usage = mergeUsage(usage, event.usage);
      if (event.type === 'finish') finishReason = event.reason;
      // After the terminal frames nothing more is sent; the usage above still counts.
      if (!encoder.finished) frames += encoder.push(event);
    }
    return frames;
  };

  const source: BodySource = {
    async pull() {
      if (done) return null;
      try {
        for (;;) {
          const result = pending ?? (await iterator.next());
          pending = undefined;
          if (result.done) {
            if (!encoder.finished) throw unfinishedStream();
            done = true;
            settle();
            return null;
          }
          const frames = encode(result.value);
          if (frames !== '') return frames;
        }
      } catch (error) {
        done = true;
        settle(error);
        return failureFrames(encoder, error, context) ?? null;
      }
    },
    cancel() {
      if (done) return;
      done = true;
      pending = undefined;
      settle();
      iterator.return?.(undefined)?.catch(() => {});
    },
  };
  return pullResponse(source, 200, { ...SSE_HEADERS, ...(typeof headers === 'function' ? headers() : headers) });
}
