import { isAbortError } from '../errors.js';
import { mergeUsage, type IRStreamEvent, type IRUsage } from '../protocols/ir.js';
import type { RequestLedger } from './request-ledger.js';

/**
 * Passes a stream's events through unchanged while keeping its usage, and settles the ledger
 * once the stream ends: completed, failed, or cut by the client (charged for what was produced).
 */
export async function* tapStreamUsage(events: AsyncIterable<IRStreamEvent>, ledger: RequestLedger, signal: AbortSignal): AsyncGenerator<IRStreamEvent> {
  let usage: IRUsage = {};
  let finishReason: string | undefined;
  let responseId: string | undefined;
  let failure: unknown;
  try {
    for await (const event of events) {
      if (event.type === 'start') {
        ledger.firstByte();
        responseId = event.id;
      }
      if (event.type === 'start' || event.type === 'usage' || event.type === 'finish') usage = mergeUsage(usage, event.usage);
      if (event.type === 'finish') finishReason = event.reason;
      yield event;
    }
  } catch (error) {
    failure = error;
    throw error;
  } finally {
    const cancelled = signal.aborted || (failure !== undefined && isAbortError(failure));
    const ok = finishReason !== undefined && failure === undefined;
    ledger.finish({
      status: ok ? 'ok' : 'error',
      usage,
      ...(finishReason ? { finishReason } : {}),
      ...(responseId ? { responseId } : {}),
      ...(failure !== undefined && !cancelled ? { error: failure } : {}),
      ...(cancelled ? { cancelled: true } : {}),
    });
  }
}

/**
 * Yields a media stream's items unchanged and calls `onEnd` once it is over: read to the end
 * (`ok`), failed (with the error), or abandoned by the client.
 */
export async function* settleAfter<T>(items: AsyncIterable<T>, onEnd: (status: 'ok' | 'error', error?: unknown) => void): AsyncGenerator<T> {
  let status: 'ok' | 'error' = 'error';
  let failure: unknown;
  try {
    for await (const item of items) yield item;
    status = 'ok';
  } catch (error) {
    failure = error;
    throw error;
  } finally {
    onEnd(status, failure);
  }
}
