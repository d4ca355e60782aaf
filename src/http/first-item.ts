/**
 * Waits for a stream's first item before the response is committed, so that an upstream that
 * fails at once (400, 429, a refused connection) gets its own HTTP status rather than an error
 * inside a 200. Returns an iterable that yields that first item again, then the rest.
 */
export async function startIterable<T>(source: AsyncIterable<T>): Promise<AsyncIterable<T>> {
  const iterator = source[Symbol.asyncIterator]();
  const first = await iterator.next();
  let pending: IteratorResult<T> | undefined = first;
  const resumed: AsyncIterator<T> = {
    next() {
      if (pending) {
        const result = pending;
        pending = undefined;
        return Promise.resolve(result);
      }
      return iterator.next();
    },
    return(value?: unknown) {
      pending = undefined;
      return iterator.return ? iterator.return(value) : Promise.resolve({ done: true, value: undefined });
    },
  };
  return { [Symbol.asyncIterator]: () => resumed };
}
