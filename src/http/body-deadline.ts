import { GatewayError } from '../errors.js';

export interface DeadlineReader {
  /** The reader's next chunk; rejects with the 408 once the deadline has passed. */
  read(): Promise<ReadableStreamReadResult<Uint8Array>>;
  /** Stops the timer; call when reading is over, however it ended. */
  clear(): void;
}

/**
 * Reads of a request body bounded by one deadline for the whole body (`limits.requestBodyTimeoutMs`),
 * so a client trickling its body (slowloris) cannot hold a connection and its buffers for long.
 * Each read races the deadline: cancelling the reader would not do, as @whatwg-node's body on
 * Node leaves a pending read pending when cancelled. No deadline when `timeoutMs` is undefined.
 */
export function withDeadline(reader: ReadableStreamDefaultReader<Uint8Array>, timeoutMs: number | undefined): DeadlineReader {
  if (timeoutMs === undefined) return { read: () => reader.read(), clear: () => {} };
  let expired = false;
  let expire: ((error: GatewayError) => void) | undefined;
  const timer = setTimeout(() => {
    expired = true;
    expire?.(bodyTimeout(timeoutMs));
  }, timeoutMs);
  return {
    read: () => {
      if (expired) return Promise.reject(bodyTimeout(timeoutMs));
      return new Promise((resolve, reject) => {
        expire = reject;
        reader.read().then(resolve, reject);
      });
    },
    clear: () => clearTimeout(timer),
  };
}

/** 408 in the route's shape; `connection: close` so the host closes rather than wait for the rest. */
export function bodyTimeout(timeoutMs: number): GatewayError {
  return new GatewayError({
    status: 408,
    type: 'invalid_request_error',
    code: 'request_body_timeout',
    message: `The request body was not received within the gateway's deadline of ${timeoutMs} ms (limits.requestBodyTimeoutMs).`,
    headers: { connection: 'close' },
  });
}
