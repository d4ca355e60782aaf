/** The upstream request timeout when neither the server nor `McpOptions` sets one. */
export const DEFAULT_UPSTREAM_TIMEOUT_MS = 60_000;
/** Longest a tool call that keeps reporting progress may run, when nothing sets it (or `timeoutMs`, if longer). */
export const DEFAULT_UPSTREAM_MAX_TOTAL_TIMEOUT_MS = 600_000;

/** One upstream's clocks: each request's, restarted by a tool call's progress, and a tool call's whole. */
export interface UpstreamTimeouts {
  timeoutMs: number;
  maxTotalTimeoutMs: number;
}

/** An upstream that did not answer within its timeout: a `tools/call` that ends so has the outcome `timeout`. */
export class UpstreamTimeoutError extends Error {
  override readonly name = 'UpstreamTimeoutError';
  /** The SDK's RequestTimeout, so a client sees the code it knows for a request that timed out. */
  readonly code = -32001;
  constructor(
    readonly server: string,
    readonly timeoutMs: number,
  ) {
    super(`Server \`${server}\` did not answer within ${timeoutMs} ms.`);
  }
}

/** Whether `error` is an upstream that took longer than its timeout (not a client that cancelled). */
export function isUpstreamTimeout(error: unknown): error is UpstreamTimeoutError {
  return error instanceof UpstreamTimeoutError;
}

/**
 * `work`, or an `UpstreamTimeoutError` once `timeoutMs` passed: for what is made of several
 * requests or waits on no request at all (a process starting, a client connecting). `work` is
 * left to its own signal; the caller closes what it started when the deadline fires.
 */
export async function withDeadline<T>(work: Promise<T>, server: string, timeoutMs: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new UpstreamTimeoutError(server, timeoutMs)), timeoutMs);
  });
  try {
    return await Promise.race([work, expired]);
  } finally {
    clearTimeout(timer);
  }
}
