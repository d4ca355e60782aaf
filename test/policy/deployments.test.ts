import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors.js';
import { DeploymentHealth } from '../../src/policy/deployment-health.js';
import { DEFAULT_RETRY_POLICY, runWithFallback, type AttemptOutcome } from '../../src/policy/fallback.js';
import { retryAfterMsOf } from '../../src/policy/retry-after.js';
import { stickyKeyOf } from '../../src/policy/sticky-key.js';
import { ModelCatalog } from '../../src/routing/catalog.js';
import { deploymentsOf, planRoute, type Deployment, type RoutingHealth } from '../../src/routing/deployments.js';
import { seededRandom } from '../helpers/seeded-random.js';

/** A breaker-only health as `retry`'s two options make it (the other knobs at their defaults). */
function healthOf(failuresBeforeCooldown: number, cooldownMs: number): DeploymentHealth {
  return new DeploymentHealth({
    failuresToOpen: failuresBeforeCooldown,
    openMs: cooldownMs,
    maxOpenMs: 300_000,
    degradedErrorRate: 0.25,
    latencyDecayMs: 10_000,
  });
}

/** Every deployment available and equal, except those whose breaker is open. */
function staticHealth(open: (deployment: Deployment) => boolean = () => false): RoutingHealth {
  return { isAvailable: (deployment) => !open(deployment), state: (deployment) => (open(deployment) ? 'open' : 'healthy'), score: () => 0 };
}

const orderDeployments = (
  deployments: readonly Deployment[],
  open: (deployment: Deployment) => boolean,
  stickyKey: string | undefined,
  random?: () => number,
) => planRoute(deployments, staticHealth(open), { stickyKey, random }).plan;

const three = deploymentsOf({
  id: 'm',
  provider: 'a',
  deployments: [
    { provider: 'a', upstreamModel: 'x', weight: 1 },
    { provider: 'b', upstreamModel: 'x', weight: 1 },
    { provider: 'c', upstreamModel: 'x', weight: 2 },
  ],
});

describe('orderDeployments', () => {
  it('spreads traffic by weight when there is no sticky key and the deployments are equal', () => {
    const firsts: Record<string, number> = {};
    const random = seededRandom(24);
    for (let i = 0; i < 20_000; i++) {
      const first = orderDeployments(three, () => false, undefined, random)[0]!.id;
      firsts[first] = (firsts[first] ?? 0) + 1;
    }
    expect(firsts['c/x']! / 20_000).toBeCloseTo(0.5, 1);
    expect(firsts['a/x']! / 20_000).toBeCloseTo(0.25, 1);
  });

  it('gives a sticky key the same order every time, and spreads many keys by weight', () => {
    const order = orderDeployments(three, () => false, 'pck:abc').map((d) => d.id);
    for (let i = 0; i < 50; i++) expect(orderDeployments(three, () => false, 'pck:abc').map((d) => d.id)).toEqual(order);
    const firsts: Record<string, number> = {};
    for (let i = 0; i < 10_000; i++) {
      const first = orderDeployments(three, () => false, `pck:${i}`)[0]!.id;
      firsts[first] = (firsts[first] ?? 0) + 1;
    }
    expect(firsts['c/x']! / 10_000).toBeCloseTo(0.5, 1);
  });

  it('moves only the keys of a deployment that cools down (consistent hashing)', () => {
    let moved = 0;
    for (let i = 0; i < 2_000; i++) {
      const before = orderDeployments(three, () => false, `pck:${i}`)[0]!;
      const after = orderDeployments(three, (d) => d.id === 'b/x', `pck:${i}`)[0]!;
      if (before.id !== after.id) {
        moved++;
        expect(before.id).toBe('b/x');
      }
    }
    expect(moved).toBeGreaterThan(0);
  });

  it('puts deployments in cooldown last, never drops them', () => {
    const order = orderDeployments(three, (d) => d.id === 'c/x', undefined).map((d) => d.id);
    expect(order).toHaveLength(3);
    expect(order[2]).toBe('c/x');
  });
});

describe('the catalog’s deployments', () => {
  it('defaults to the model’s own provider and upstream model', () => {
    const catalog = new ModelCatalog([{ id: 'gpt', provider: 'openai', upstreamModel: 'gpt-4.1' }], ['openai']);
    expect(catalog.deployments(catalog.get('gpt')!)).toEqual([{ id: 'openai/gpt-4.1', provider: 'openai', upstreamModel: 'gpt-4.1', weight: 1 }]);
  });

  it.each([
    [{ id: 'm', deployments: [] }, 'models[0].deployments must be a non-empty array'],
    [{ id: 'm', deployments: [{ provider: 'nope' }] }, 'models[0].deployments[0].provider "nope" is not a configured provider'],
    [{ id: 'm', deployments: [{ provider: 'a', weight: 0 }] }, 'models[0].deployments[0].weight must be a positive number'],
    [{ id: 'm', deployments: [{ provider: 'a' }, { provider: 'a' }] }, 'two deployments share an id'],
  ])('rejects a bad deployment list at start: %j', (model, message) => {
    expect(() => new ModelCatalog([model as any], ['a'])).toThrow(message);
  });
});

describe('runWithFallback', () => {
  const plan: Deployment[] = three;
  const run = (
    fail: (deployment: Deployment, attempt: number) => Error | undefined,
    extra: { replaySafe?: boolean; retries?: number; health?: DeploymentHealth } = {},
  ) => {
    const outcomes: AttemptOutcome[] = [];
    const promise = runWithFallback({
      plan,
      policy: { ...DEFAULT_RETRY_POLICY, backoffMs: 1, retries: extra.retries ?? 2 },
      health: extra.health ?? healthOf(3, 1000),
      replaySafe: extra.replaySafe ?? true,
      signal: new AbortController().signal,
      attempt: async (deployment, attempt) => {
        const error = fail(deployment, attempt);
        if (error) throw error;
        return deployment.id;
      },
      onAttempt: (outcome) => void outcomes.push(outcome),
      random: () => 0.5,
    });
    return { promise, outcomes };
  };
  const serverError = () => new GatewayError({ status: 500, message: 'boom' });

  it('returns the first deployment that answers', async () => {
    const { promise, outcomes } = run((deployment) => (deployment.id === 'a/x' ? serverError() : undefined));
    await expect(promise).resolves.toMatchObject({ result: 'b/x', attempts: 2 });
    expect(outcomes.map((outcome) => [outcome.deployment.id, outcome.willRetry])).toEqual([
      ['a/x', true],
      ['b/x', false],
    ]);
  });

  it('stops after the retry budget and throws the last error', async () => {
    const { promise, outcomes } = run(serverError, { retries: 1 });
    await expect(promise).rejects.toMatchObject({ status: 500 });
    expect(outcomes).toHaveLength(2);
  });

  it('does not retry a client error', async () => {
    const { promise, outcomes } = run(() => new GatewayError({ status: 400, message: 'bad' }));
    await expect(promise).rejects.toMatchObject({ status: 400 });
    expect(outcomes).toHaveLength(1);
  });

  it('a request that is not replay-safe is retried after a 429 or a refused connection, not after a 500', async () => {
    const refused = new GatewayError({ status: 502, message: 'unreachable', cause: Object.assign(new Error('connect'), { code: 'ECONNREFUSED' }) });
    await expect(run((d) => (d.id === 'a/x' ? refused : undefined), { replaySafe: false }).promise).resolves.toMatchObject({ result: 'b/x' });
    await expect(
      run((d) => (d.id === 'a/x' ? new GatewayError({ status: 429, message: 'slow' }) : undefined), { replaySafe: false }).promise,
    ).resolves.toMatchObject({ result: 'b/x' });
    await expect(run((d) => (d.id === 'a/x' ? serverError() : undefined), { replaySafe: false }).promise).rejects.toMatchObject({ status: 500 });
  });

  it('counts a 5xx against the deployment even when the request may not be replayed', async () => {
    const health = healthOf(1, 60_000);
    await expect(run((d) => (d.id === 'a/x' ? serverError() : undefined), { replaySafe: false, health }).promise).rejects.toMatchObject({ status: 500 });
    expect(health.isCooling(plan[0]!)).toBe(true);
    expect(health.isCooling(plan[1]!)).toBe(false);
  });

  it('remembers at most 10,000 deployments: a wildcard’s deployment ids hold names clients chose', () => {
    const health = healthOf(2, 60_000);
    const internals = health as unknown as { tracked: Map<string, unknown> };
    const deployment = (i: number) => ({ id: `oai/made-up-${i}`, provider: 'oai', upstreamModel: `made-up-${i}`, weight: 1 });
    for (let i = 0; i < 25_000; i++) health.failed(deployment(i), undefined);
    for (let i = 0; i < 25_000; i++) health.failed(deployment(i), 30_000);
    expect(internals.tracked.size).toBe(10_000);
    // The newest are kept.
    expect(health.isCooling(deployment(24_999))).toBe(true);
    expect(health.isCooling(deployment(0))).toBe(false);
  });

  it('reports a failure that is not a GatewayError to onAttempt, masked, and rethrows it as it is', async () => {
    const bug = new TypeError('provider bug');
    const health = healthOf(1, 60_000);
    const { promise, outcomes } = run(() => bug, { health });
    await expect(promise).rejects.toBe(bug);
    expect(outcomes).toHaveLength(1);
    expect(outcomes[0]).toMatchObject({ deployment: plan[0], attempt: 1, willRetry: false, error: { status: 500 } });
    expect(outcomes[0]!.error!.message).not.toContain('provider bug');
    // A bug in the gateway or a provider says nothing of the upstream's health.
    expect(health.isCooling(plan[0]!)).toBe(false);
  });

  it('waits out a short retry-after before coming back to the same deployment', async () => {
    const single = [plan[0]!];
    const outcomes: AttemptOutcome[] = [];
    let calls = 0;
    const started = Date.now();
    const result = await runWithFallback({
      plan: single,
      policy: { ...DEFAULT_RETRY_POLICY, backoffMs: 1, retries: 1 },
      health: healthOf(3, 1000),
      replaySafe: true,
      signal: new AbortController().signal,
      attempt: async () => {
        if (calls++ === 0) throw new GatewayError({ status: 429, message: 'slow', headers: { 'retry-after-ms': '150' } });
        return Date.now() - started;
      },
      onAttempt: (outcome) => void outcomes.push(outcome),
    });
    // The wait is what is left of the 150 ms when the retry is planned (a millisecond may have gone
    // by since the 429), far more than the 1 ms back-off; timers may also fire a millisecond early.
    expect(result.result).toBeGreaterThanOrEqual(140);
    expect(outcomes[0]).toMatchObject({ willRetry: true, delayMs: expect.any(Number) });
    expect(outcomes[0]!.delayMs!).toBeGreaterThan(100);
    expect(outcomes[0]!.delayMs!).toBeLessThanOrEqual(150);
  });

  it('stops at once on an abort, and still reports the attempt', async () => {
    const controller = new AbortController();
    const outcomes: AttemptOutcome[] = [];
    const health = healthOf(1, 60_000);
    const promise = runWithFallback({
      plan,
      policy: DEFAULT_RETRY_POLICY,
      health,
      replaySafe: true,
      signal: controller.signal,
      attempt: async () => {
        controller.abort();
        throw Object.assign(new Error('aborted'), { name: 'AbortError' });
      },
      onAttempt: (outcome) => void outcomes.push(outcome),
    });
    await expect(promise).rejects.toMatchObject({ name: 'AbortError' });
    expect(outcomes).toMatchObject([{ deployment: plan[0], willRetry: false, error: { status: 500 } }]);
    expect(health.isCooling(plan[0]!)).toBe(false);
  });
});

describe('retry-after parsing', () => {
  it('reads retry-after-ms, seconds and HTTP dates', () => {
    expect(retryAfterMsOf({ 'retry-after-ms': '250' })).toBe(250);
    expect(retryAfterMsOf({ 'retry-after': '3' })).toBe(3000);
    const now = Date.parse('2026-11-22T10:00:00Z');
    expect(retryAfterMsOf({ 'retry-after': 'Sun, 22 Nov 2026 10:00:05 GMT' }, now)).toBe(5000);
    expect(retryAfterMsOf({ 'retry-after': 'soon' })).toBeUndefined();
    expect(retryAfterMsOf({})).toBeUndefined();
  });
});

describe('stickyKeyOf', () => {
  const key = { id: 'k1', models: '*' as const };
  it('uses prompt_cache_key when sent', () => {
    expect(stickyKeyOf({ prompt_cache_key: 'abc' }, key)).toBe('pck:abc');
  });
  it('falls back to the key and a long system prompt, in every protocol', () => {
    const long = 'You are a careful assistant. '.repeat(200);
    const responses = stickyKeyOf({ instructions: long, input: 'hi' }, key);
    const chat = stickyKeyOf(
      {
        messages: [
          { role: 'system', content: long },
          { role: 'user', content: 'hi' },
        ],
      },
      key,
    );
    const messages = stickyKeyOf({ system: [{ type: 'text', text: long }], messages: [] }, key);
    expect(responses).toMatch(/^prefix:k1:/);
    expect(chat).toBe(responses);
    expect(messages).toBe(responses);
    expect(stickyKeyOf({ instructions: long }, { id: 'k2', models: '*' })).not.toBe(responses);
  });
  it('leaves short prompts unpinned', () => {
    expect(stickyKeyOf({ instructions: 'Be brief.', input: 'hi' }, key)).toBeUndefined();
  });
});
