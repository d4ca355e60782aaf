/**
 * At most `size` holders at once; others wait in order. `take` resolves to the release of a
 * slot, and rejects (leaving the queue) when `signal` fires first.
 */
export class Slots {
  private free: number;
  private readonly waiting: (() => void)[] = [];

  constructor(size: number) {
    this.free = size;
  }

  /** Holders waiting for a slot. */
  get queued(): number {
    return this.waiting.length;
  }

  async take(signal?: AbortSignal): Promise<() => void> {
    signal?.throwIfAborted();
    if (this.free > 0) this.free--;
    else {
      await new Promise<void>((resolve, reject) => {
        const onAbort = () => {
          this.waiting.splice(this.waiting.indexOf(granted), 1);
          reject(signal!.reason);
        };
        const granted = () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        };
        this.waiting.push(granted);
        signal?.addEventListener('abort', onAbort, { once: true });
      });
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      // The slot passes to the first waiter, or is freed.
      const next = this.waiting.shift();
      if (next) next();
      else this.free++;
    };
  }
}
