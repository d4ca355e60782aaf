import { expect, it } from 'vitest';
import { RequestTiming } from '../../src/telemetry/request-timing.js';

/** The overhead clock: total time less the waits it is told of, taken once when the answer is ready. */
it('subtracts the upstream waits and back-off it is told of, and keeps the value it first gave', () => {
  const timing = new RequestTiming();
  timing.callingUpstream();
  // A minute of waiting cannot have been the gateway's: nothing of it is overhead.
  timing.waited(60_000);
  expect(timing.answered()).toBe(0);
  // After the answer is ready (a stream's headers), the rest of the stream is not overhead.
  timing.waited(-120_000);
  expect(timing.answered()).toBe(0);
});

it('is unknown when an upstream was called that told no wait (a custom provider), and the whole time without one', () => {
  const silent = new RequestTiming();
  silent.callingUpstream();
  expect(silent.answered()).toBeUndefined();
  const local = new RequestTiming();
  expect(local.answered()).toBeGreaterThanOrEqual(0);
});
