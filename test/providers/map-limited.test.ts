import { describe, expect, it } from 'vitest';
import { mapLimited } from '../../src/providers/http/map-limited.js';

/** A call the test settles itself, with the signal it was given. */
interface Pending {
  item: number;
  signal: AbortSignal;
  resolve(value: string): void;
  reject(error: unknown): void;
}

/** `mapLimited` over `count` items whose calls wait for the test to settle them. */
function controlled(count: number, limit: number, signal = new AbortController().signal) {
  const started: Pending[] = [];
  const run = mapLimited(
    Array.from({ length: count }, (_, item) => item),
    limit,
    signal,
    (item, callSignal) =>
      new Promise<string>((resolve, reject) => {
        started.push({ item, signal: callSignal, resolve, reject });
        callSignal.addEventListener('abort', () => reject(callSignal.reason), { once: true });
      }),
  );
  return { started, run };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('mapLimited', () => {
  it('keeps at most `limit` calls open and answers in input order', async () => {
    const { started, run } = controlled(5, 2);
    expect(started.map((call) => call.item)).toEqual([0, 1]);
    started[1]!.resolve('b');
    await settle();
    expect(started.map((call) => call.item)).toEqual([0, 1, 2]);
    started[0]!.resolve('a');
    await settle();
    for (const call of started.slice(2)) call.resolve(String.fromCharCode(97 + call.item));
    await settle();
    for (const call of started.slice(4)) call.resolve('e');
    expect(await run).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(started).toHaveLength(5);
  });

  it('the first failure rejects, aborts the calls in flight and starts no other', async () => {
    const { started, run } = controlled(100, 8);
    const refused = new Error('the upstream refused input 3');
    started[3]!.reject(refused);
    await expect(run).rejects.toBe(refused);
    // The others, still open, were told to stop; finishing them now hands out nothing new.
    expect(started.filter((call) => call.item !== 3).every((call) => call.signal.aborted)).toBe(true);
    for (const call of started) call.resolve('late');
    await settle();
    expect(started).toHaveLength(8);
  });

  it('the caller’s abort ends the run and its calls', async () => {
    const caller = new AbortController();
    const { started, run } = controlled(20, 4, caller.signal);
    caller.abort(new DOMException('client left', 'AbortError'));
    await expect(run).rejects.toMatchObject({ name: 'AbortError' });
    expect(started.every((call) => call.signal.aborted)).toBe(true);
    expect(started).toHaveLength(4);
  });

  it('an already aborted caller starts nothing; no items is an empty answer', async () => {
    const caller = new AbortController();
    caller.abort();
    const { started, run } = controlled(3, 2, caller.signal);
    await expect(run).rejects.toMatchObject({ name: 'AbortError' });
    expect(started).toHaveLength(0);
    expect(await controlled(0, 8).run).toEqual([]);
  });
});
