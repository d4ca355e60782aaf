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
