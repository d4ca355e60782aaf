import type { Logger } from '../logger.js';

/**
 * Runs an observer's work (a plugin's `onUsage`, `onAttempt`, `onRefused`, `onToolCall`, a limit
 * settlement) without holding the answer for it: one that throws or rejects is logged as
 * `<what> failed`, never changing what the client gets.
 */
export function runObserver(logger: Logger, what: string, requestId: string, work: () => unknown): Promise<void> {
  return Promise.resolve()
    .then(work)
    .then(
      () => undefined,
      (failure: unknown) => logger.error(`${what} failed`, { requestId, message: failure instanceof Error ? failure.message : String(failure) }),
    );
}
