/**
 * Bytes a reader handles between two turns of the event loop. Reads of a body the host has
 * buffered already resolve as microtasks, so a loop over a 20 MB body ran to its end in one
 * task (about 40 ms here) while every other stream waited.
 */
export const YIELD_EVERY_BYTES = 1024 * 1024;

/** Resolves on the next turn of the event loop, after pending timers and I/O callbacks. */
export function yieldToLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
