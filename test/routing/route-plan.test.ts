import { describe, expect, it } from 'vitest';
import { DeploymentHealth } from '../../src/policy/deployment-health.js';
import { deploymentsOf, planRoute, rendezvousOrder, type Deployment } from '../../src/routing/deployments.js';
import { routeHeaderValue } from '../../src/routing/route-headers.js';
import { seededRandom } from '../helpers/seeded-random.js';

const T0 = 1_800_000_000_000;
const health = () => new DeploymentHealth({ failuresToOpen: 3, openMs: 1000, maxOpenMs: 8000, degradedErrorRate: 0.25, latencyDecayMs: 10_000 });
const [fast, slow, heavy] = deploymentsOf({
  id: 'm',
  provider: 'a',
  deployments: [
    { id: 'fast', provider: 'a', upstreamModel: 'x' },
    { id: 'slow', provider: 'b', upstreamModel: 'x' },
    { id: 'heavy', provider: 'c', upstreamModel: 'x', weight: 2 },
  ],
}) as [Deployment, Deployment, Deployment];
const all = [fast, slow, heavy];

/** How often each deployment comes first over `n` plans. */
function firsts(n: number, plan: () => Deployment): Record<string, number> {
  const counts: Record<string, number> = {};
  for (let i = 0; i < n; i++) {
    const id = plan().id;
    counts[id] = (counts[id] ?? 0) + 1;
  }
  return counts;
}

describe('planRoute: power of two choices by latency and load', () => {
  it('keeps the lower score of two: the slowest deployment is first only when it is not drawn with a faster one', () => {
    const deployments = health();
    deployments.succeeded(fast, 50, T0);
    deployments.succeeded(slow, 2000, T0);
    deployments.succeeded(heavy, 400, T0);
    const random = seededRandom(7);
    const counts = firsts(3000, () => planRoute(all, deployments, { random, now: T0 }).plan[0]!);
    // Never first: drawn, it always meets a faster one.
    expect(counts.slow ?? 0).toBe(0);
    expect(counts.fast! / 3000).toBeGreaterThan(0.5);
    // The rest of the plan is by score.
    expect(
      planRoute(all, deployments, { random, now: T0 })
        .plan.slice(1)
        .map((d) => d.id),
    ).toEqual(expect.arrayContaining(['slow']));
    const plan = planRoute([slow, heavy], deployments, { random, now: T0 });
    expect(plan.plan.map((d) => d.id)).toEqual(['heavy', 'slow']);
    expect(plan.reason).toBe('p2c');
  });

  it('multiplies latency by 1 + requests in flight: a fast deployment that is busy loses to an idle one', () => {
    const deployments = health();
    deployments.succeeded(fast, 50, T0);
    deployments.succeeded(slow, 500, T0);
    const leases = Array.from({ length: 20 }, () => deployments.begin(fast, T0));
    expect(planRoute([fast, slow], deployments, { now: T0 }).plan[0]).toBe(slow);
    for (const lease of leases) lease.release();
    expect(planRoute([fast, slow], deployments, { now: T0 }).plan[0]).toBe(fast);
  });

  it('honours weights among equal deployments (ties go to the first drawn, drawn by weight)', () => {
    const random = seededRandom(24);
    const deployments = health();
    const counts = firsts(20_000, () => planRoute(all, deployments, { random, now: T0 }).plan[0]!);
    expect(counts.heavy! / 20_000).toBeGreaterThan(0.46);
    expect(counts.heavy! / 20_000).toBeLessThan(0.54);
    expect(counts.fast! / 20_000).toBeGreaterThan(0.22);
    expect(counts.fast! / 20_000).toBeLessThan(0.28);
  });

  it('puts open breakers last, and sends a half-open deployment its probe first', () => {
    const deployments = health();
    deployments.succeeded(fast, 50, T0);
    for (let i = 0; i < 3; i++) deployments.failed(slow, undefined, T0, 5000);
    const plan = planRoute([slow, fast], deployments, { now: T0 + 1 });
    expect(plan.plan.map((d) => d.id)).toEqual(['fast', 'slow']);
    const probe = planRoute([slow, fast], deployments, { now: T0 + 1000 });
    expect(probe).toMatchObject({ reason: 'probe', plan: [slow, fast] });
    // While the probe is out, the others go first again.
    const lease = deployments.begin(slow, T0 + 1000);
    expect(planRoute([slow, fast], deployments, { now: T0 + 1001 }).plan.map((d) => d.id)).toEqual(['fast', 'slow']);
    lease.release();
  });

  it('tries every deployment when all are open: last_resort; a single deployment is always `only`', () => {
    const deployments = health();
    for (const deployment of [fast, slow]) for (let i = 0; i < 3; i++) deployments.failed(deployment, undefined, T0);
    expect(planRoute([fast, slow], deployments, { now: T0 }).reason).toBe('last_resort');
    expect(planRoute([fast, slow], deployments, { now: T0 }).plan).toHaveLength(2);
    expect(planRoute([fast], deployments, { now: T0 })).toMatchObject({ reason: 'only', plan: [fast] });
  });
});

describe('planRoute: a sticky key keeps rendezvous', () => {
  it('latency does not override stickiness, an open breaker does', () => {
    const deployments = health();
    const key = Array.from({ length: 100 }, (_, i) => `pck:${i}`).find((candidate) => rendezvousOrder(all, candidate)[0] === slow)!;
    deployments.succeeded(fast, 10, T0);
    deployments.succeeded(slow, 5000, T0);
    for (let i = 0; i < 20; i++) {
      const plan = planRoute(all, deployments, { stickyKey: key, now: T0 });
      expect([plan.reason, plan.plan[0]]).toEqual(['sticky', slow]);
    }
    for (let i = 0; i < 3; i++) deployments.failed(slow, undefined, T0);
    const moved = planRoute(all, deployments, { stickyKey: key, now: T0 });
    expect(moved.plan[0]).not.toBe(slow);
    expect(moved.plan.at(-1)).toBe(slow);
  });
});

describe('planRoute: the order a request asks for', () => {
  const prices: Record<string, number | undefined> = { fast: 10, slow: 2, heavy: undefined };
  it('price: cheapest first, unknown prices after the known ones, open breakers last', () => {
    const deployments = health();
    const plan = planRoute(all, deployments, { order: 'price', priceOf: (d) => prices[d.id], now: T0 });
    expect(plan).toMatchObject({ order: 'price', reason: 'price' });
    expect(plan.plan.map((d) => d.id)).toEqual(['slow', 'fast', 'heavy']);
    for (let i = 0; i < 3; i++) deployments.failed(slow, undefined, T0);
    expect(planRoute(all, deployments, { order: 'price', priceOf: (d) => prices[d.id], now: T0 }).plan.map((d) => d.id)).toEqual(['fast', 'heavy', 'slow']);
  });

  it('configured: as listed, whatever the latency and the sticky key', () => {
    const deployments = health();
    deployments.succeeded(fast, 5000, T0);
    const plan = planRoute(all, deployments, { order: 'configured', stickyKey: 'pck:1', now: T0 });
    expect(plan).toMatchObject({ order: 'configured', reason: 'configured' });
    expect(plan.plan).toEqual(all);
  });
});

describe('x-infergate-route', () => {
  it('is a short list of key=value pairs; odd deployment ids are percent-encoded and cut', () => {
    expect(routeHeaderValue({ deployment: 'openai-east', reason: 'p2c', order: 'latency', attempts: 1 })).toBe(
      'deployment=openai-east; reason=p2c; order=latency; attempts=1',
    );
    const odd = routeHeaderValue({ deployment: `openai/my model;x=é\ud800${'z'.repeat(500)}`, reason: 'fallback', order: 'price', attempts: 2 });
    expect(odd).toMatch(/^deployment=openai\/my%20model%3Bx%3D%C3%A9%EF%BF%BDz+; reason=fallback; order=price; attempts=2$/);
    expect(odd.length).toBeLessThan(220);
  });
});
