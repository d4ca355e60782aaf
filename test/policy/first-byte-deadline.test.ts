import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { GatewayError, isGatewayError } from '../../src/errors.js';
import type { DeploymentHealth } from '../../src/policy/deployment-health.js';
import { DEFAULT_RETRY_POLICY, runWithFallback } from '../../src/policy/fallback.js';
import { deploymentsOf, type Deployment } from '../../src/routing/deployments.js';

/**
 * The first-byte timeout inside `runWithFallback`, on fake timers: which signal each attempt
 * gets, when it fires, and that no timer outlives the attempt (the gateway tests show the rest
 * over real sockets).
 */
const plan = deploymentsOf({
  id: 'm',
  provider: 'a',
  deployments: [
    { provider: 'a', upstreamModel: 'x', id: 'first' },
    { provider: 'b', upstreamModel: 'x', id: 'second' },
  ],
});
const BUDGET_MS = 200;

let failed: string[];
const health = {
  succeeded: () => {},
  failed: (deployment: Deployment) => void failed.push(deployment.id),
  isCooling: () => false,
} as unknown as DeploymentHealth;

beforeEach(() => {
  vi.useFakeTimers();
  failed = [];
});
afterEach(() => {
  vi.useRealTimers();
});

/** An attempt that settles only when its signal fires, as an upstream call does. */
const untilAborted = (signal: AbortSignal) => new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));

function run(attempt: (deployment: Deployment, signal: AbortSignal) => Promise<string>, extra: { replaySafe?: boolean; client?: AbortController } = {}) {
  const signals: AbortSignal[] = [];
  const client = extra.client ?? new AbortController();
  const promise = runWithFallback({
    plan,
    policy: { ...DEFAULT_RETRY_POLICY, firstByteTimeoutMs: BUDGET_MS },
    health,
    replaySafe: extra.replaySafe ?? true,
    signal: client.signal,
    attempt: (deployment, _, signal) => {
      signals.push(signal);
      return attempt(deployment, signal);
    },
    onAttempt: () => {},
  });
  return { promise, signals, client };
}

describe('first-byte timeout in runWithFallback', () => {
  it('an attempt with no first byte within the budget is aborted with a 504 and the next deployment answers', async () => {
    const { promise, signals } = run((deployment, signal) => (deployment.id === 'first' ? untilAborted(signal) : Promise.resolve('from second')));
    await vi.advanceTimersByTimeAsync(BUDGET_MS);
    await expect(promise).resolves.toMatchObject({ result: 'from second', attempts: 2 });
    expect(signals[0]!.aborted).toBe(true);
    expect(isGatewayError(signals[0]!.reason) && [signals[0]!.reason.status, signals[0]!.reason.code]).toEqual([504, 'upstream_first_byte_timeout']);
    expect(failed).toEqual(['first']);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('fails over even when the attempt ignores its signal (a provider that never settles)', async () => {
    const { promise } = run((deployment) => (deployment.id === 'first' ? new Promise<string>(() => {}) : Promise.resolve('from second')));
    await vi.advanceTimersByTimeAsync(BUDGET_MS);
    await expect(promise).resolves.toMatchObject({ result: 'from second' });
  });

  it('every deployment timed out: the last 504 reaches the caller', async () => {
    const { promise } = run((_, signal) => untilAborted(signal));
    const settled = promise.catch((error: unknown) => error);
    await vi.advanceTimersByTimeAsync(BUDGET_MS * 2);
    expect(await settled).toMatchObject({ status: 504, code: 'upstream_first_byte_timeout', message: expect.stringContaining(`${BUDGET_MS} ms`) });
    expect(failed).toEqual(['first', 'second']);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('after the first byte the timer is gone: the signal fires only when the client leaves', async () => {
    const { promise, signals, client } = run(async () => 'fast');
    await expect(promise).resolves.toMatchObject({ result: 'fast', attempts: 1 });
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(BUDGET_MS * 10);
    expect(signals[0]!.aborted).toBe(false);
    client.abort();
    expect(signals[0]!.aborted).toBe(true);
  });

  it('a failed attempt leaves no timer, and whatever is left of it is cancelled', async () => {
    const { promise, signals } = run(async () => {
      throw new GatewayError({ status: 400, message: 'bad request' });
    });
    await expect(promise).rejects.toMatchObject({ status: 400 });
    expect(vi.getTimerCount()).toBe(0);
    expect(signals[0]!.aborted).toBe(true);
  });

  it('a client that leaves during an attempt aborts it: no fallback, the abort is the outcome', async () => {
    const client = new AbortController();
    const { promise, signals } = run((_, signal) => untilAborted(signal), { client });
    const settled = promise.catch((error: unknown) => error);
    client.abort();
    expect(await settled).toMatchObject({ name: 'AbortError' });
    expect(signals).toHaveLength(1);
    expect(failed).toEqual([]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('a request that may not be replayed is not timed: its attempt carries the client’s own signal', async () => {
    const client = new AbortController();
    let finish!: (value: string) => void;
    const { promise, signals } = run(() => new Promise<string>((resolve) => (finish = resolve)), { replaySafe: false, client });
    expect(signals[0]).toBe(client.signal);
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(BUDGET_MS * 10);
    finish('slow but whole');
    await expect(promise).resolves.toMatchObject({ result: 'slow but whole', attempts: 1 });
  });
});
