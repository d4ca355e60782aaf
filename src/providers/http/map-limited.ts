/**
 * Upstream calls one request may have in flight when it is split into several (embeddings in
 * batches): 2048 inputs must not become 2048 calls and sockets at once, which would exhaust the
 * upstream's per-minute quota for every tenant.
 */
export const CALLS_IN_FLIGHT = 8;

/**
 * `run` over `items`, at most `limit` at a time, results in input order. The first failure
 * rejects at once and ends the run: no item is started after it, and the calls in flight are
 * aborted through the signal each `run` gets, which also fires when the caller's `signal` does
 * (the client left). Without this, a request the client already has its error for would go on
 * making (unbilled) upstream calls for every remaining item.
 */
export async function mapLimited<T, R>(
  items: readonly T[],
  limit: number,
  signal: AbortSignal,
  run: (item: T, signal: AbortSignal) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  const ended = new AbortController();
  const end = (reason: unknown) => {
    if (!ended.signal.aborted) ended.abort(reason);
  };
  const onCallerAbort = () => end(signal.reason);
  if (signal.aborted) onCallerAbort();
  else signal.addEventListener('abort', onCallerAbort, { once: true });

  let next = 0;
  const worker = async () => {
    while (next < items.length && !ended.signal.aborted) {
      const at = next++;
      results[at] = await run(items[at]!, ended.signal);
    }
    // Left the loop because the run ended (the caller's abort): it did not complete.
    ended.signal.throwIfAborted();
  };
  try {
    await Promise.all(
      Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, () =>
        worker().catch((error: unknown) => {
          end(error);
          throw error;
        }),
      ),
    );
    return results;
  } finally {
    signal.removeEventListener('abort', onCallerAbort);
  }
}
