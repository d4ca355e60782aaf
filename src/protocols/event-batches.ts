import type { IRStreamEvent } from './ir.js';

/** The events of a batched stream one at a time (for `TextCapability.stream` and accumulation). */
export async function* eventsOf(batches: AsyncIterable<readonly IRStreamEvent[]>): AsyncGenerator<IRStreamEvent> {
  for await (const batch of batches) yield* batch;
}

/** A stream of single events as batches of one (a provider without `streamBatches`). */
export async function* batchesOf(events: AsyncIterable<IRStreamEvent>): AsyncGenerator<readonly IRStreamEvent[]> {
  for await (const event of events) yield [event];
}
