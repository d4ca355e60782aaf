import { upstreamFirstByteTimeout } from '../errors.js';

/**
 * The first-byte timeout of one attempt. The attempt gets its own abort signal, chained to the
 * client's: when no first byte was secured within the budget, it fires (undici then cancels the
 * upstream request and drops its socket, so nothing of it can reach the client later) and the
 * attempt fails at once with a 504 `upstream_first_byte_timeout`, even if a provider ignores
 * the signal. Once the first byte is secured the timer is gone: the rest of the answer is the
 * idle timeout's, and the signal fires only when the client leaves.
 */
export class FirstByteDeadline {
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout;
  private readonly expired: Promise<never>;
  private readonly followClient = () => this.controller.abort(this.client.reason);

  constructor(
    private readonly client: AbortSignal,
    deployment: string,
    budgetMs: number,
  ) {
    if (client.aborted) this.controller.abort(client.reason);
    else client.addEventListener('abort', this.followClient, { once: true });
    let expire!: (error: unknown) => void;
    this.expired = new Promise<never>((_, reject) => (expire = reject));
    // Observed by `race`; this only keeps a timeout with no racer from being an unhandled rejection.
    this.expired.catch(() => {});
    this.timer = setTimeout(() => {
      const error = upstreamFirstByteTimeout(deployment, budgetMs);
      // Failed first, so the race settles on the timeout rather than on the abort it causes.
      expire(error);
      this.controller.abort(error);
    }, budgetMs);
  }

  /** What the attempt's upstream calls carry. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /**
   * The attempt's outcome, or the timeout's failure if it comes first. The abandoned attempt's
   * upstream call is aborted; whatever it settles to later is dropped.
   */
  race<T>(attempt: Promise<T>): Promise<T> {
    return Promise.race([attempt, this.expired]);
  }

  /** The first byte is secured: the timer stops, and the signal now follows the client's alone. */
  secured(): void {
    clearTimeout(this.timer);
  }

  /** The attempt failed: the timer stops, whatever is left of the attempt is cancelled, and the client's signal lets go of it. */
  abandoned(): void {
    clearTimeout(this.timer);
    this.client.removeEventListener('abort', this.followClient);
    if (!this.controller.signal.aborted) this.controller.abort();
  }
}
