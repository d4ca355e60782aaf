import { describe, expect, it } from 'vitest';
import { createGateway } from '../../src/gateway.js';
import { CircuitBreaker } from '../../src/policy/circuit-breaker.js';
import { DeploymentHealth } from '../../src/policy/deployment-health.js';
import type { HealthBus, HealthNotice } from '../../src/policy/health-bus.js';
import { MemoryHealthBus } from '../../src/policy/memory-health-bus.js';
import type { Deployment } from '../../src/routing/deployments.js';
import { PeakEwma } from '../../src/routing/peak-ewma.js';

/** Pure units driven by an explicit clock (ms since epoch, far from 0). */
const T0 = 1_800_000_000_000;
const settings = { failuresToOpen: 3, openMs: 1000, maxOpenMs: 3500, degradedErrorRate: 0.25 };
const east: Deployment = { id: 'east', provider: 'openai', upstreamModel: 'gpt-4.1', weight: 1 };
const west: Deployment = { id: 'west', provider: 'azure', upstreamModel: 'gpt-4.1', weight: 1 };

describe('PeakEwma', () => {
  it('takes a higher sample at once, and decays towards 0 with its time constant when read', () => {
    const ewma = new PeakEwma(10_000, T0);
    expect(ewma.known).toBe(false);
    expect(ewma.read(T0)).toBe(0);
    ewma.observe(100, T0);
    ewma.observe(900, T0 + 1);
    expect(ewma.known).toBe(true);
    expect(ewma.read(T0 + 1)).toBe(900);
    // One time constant later: e^-1 of it.
    expect(ewma.read(T0 + 10_001)).toBeCloseTo(900 / Math.E, 6);
  });

  it('moves towards a lower sample by how much time passed since the last update', () => {
    const ewma = new PeakEwma(1000, T0);
    ewma.observe(1000, T0);
    ewma.observe(0.5, T0);
    expect(ewma.read(T0)).toBe(1000);
    ewma.observe(100, T0 + 1000);
    expect(ewma.read(T0 + 1000)).toBeCloseTo(1000 / Math.E + 100 * (1 - 1 / Math.E), 6);
  });
});

describe('CircuitBreaker', () => {
  it('opens after failuresToOpen retryable failures in a row; a success in between starts the count again', () => {
    const breaker = new CircuitBreaker(settings);
    breaker.failed(undefined, T0);
    breaker.failed(undefined, T0);
    breaker.succeeded(T0);
    breaker.failed(undefined, T0);
    expect(breaker.failed(undefined, T0)).toBeUndefined();
    expect(breaker.state(T0)).not.toBe('open');
    expect(breaker.failed(undefined, T0)).toEqual({ state: 'open', forMs: 1000 });
    expect(breaker.state(T0 + 999)).toBe('open');
    expect(breaker.admits(T0 + 999)).toBe(false);
  });

  it('goes half-open after its open time: one probe at a time; the probe’s success closes it', () => {
    const breaker = new CircuitBreaker(settings);
    for (let i = 0; i < 3; i++) breaker.failed(undefined, T0);
    expect(breaker.state(T0 + 1000)).toBe('half_open');
    expect(breaker.admits(T0 + 1000)).toBe(true);
    expect(breaker.startProbe(T0 + 1000)).toBe(true);
    // The probe is out: no second request until it ends.
    expect(breaker.admits(T0 + 1001)).toBe(false);
    expect(breaker.startProbe(T0 + 1001)).toBe(false);
    expect(breaker.succeeded(T0 + 1200)).toEqual({ state: 'closed' });
    expect(breaker.state(T0 + 1200)).not.toMatch(/open/);
    expect(breaker.admits(T0 + 1200)).toBe(true);
  });

  it('a probe that ends without an answer (client left) frees the slot for the next one', () => {
    const breaker = new CircuitBreaker(settings);
    for (let i = 0; i < 3; i++) breaker.failed(undefined, T0);
    expect(breaker.startProbe(T0 + 1000)).toBe(true);
    breaker.endProbe();
    expect(breaker.startProbe(T0 + 1001)).toBe(true);
  });

  it('a failed probe opens it again for twice as long, capped at maxOpenMs', () => {
    const breaker = new CircuitBreaker(settings);
    for (let i = 0; i < 3; i++) breaker.failed(undefined, T0);
    let now = T0 + 1000;
    const openTimes: number[] = [];
    for (let round = 0; round < 4; round++) {
      expect(breaker.state(now)).toBe('half_open');
      const transition = breaker.failed(undefined, now);
      expect(transition?.state).toBe('open');
      openTimes.push((transition as { forMs: number }).forMs);
      expect(breaker.state(now + openTimes.at(-1)! - 1)).toBe('open');
      now += openTimes.at(-1)!;
    }
    expect(openTimes).toEqual([2000, 3500, 3500, 3500]);
    // Closed by a success, it starts again from openMs.
    breaker.succeeded(now);
    for (let i = 0; i < 3; i++) breaker.failed(undefined, now);
    expect(breaker.state(now + 999)).toBe('open');
    expect(breaker.state(now + 1000)).toBe('half_open');
  });

  it('a 429 with a retry-after opens it at once for that long, at most openMs', () => {
    const breaker = new CircuitBreaker(settings);
    expect(breaker.failed(400, T0)).toEqual({ state: 'backoff', forMs: 400 });
    expect(breaker.state(T0 + 399)).toBe('open');
    expect(breaker.state(T0 + 400)).toBe('half_open');
    const other = new CircuitBreaker(settings);
    expect(other.failed(60_000, T0)).toEqual({ state: 'backoff', forMs: 1000 });
    // More 429s while it is open (requests that were in flight) extend it without a new transition.
    expect(other.failed(800, T0 + 500)).toBeUndefined();
    expect(other.state(T0 + 1299)).toBe('open');
    expect(other.failed(100, T0 + 600)).toBeUndefined();
    expect(other.state(T0 + 1300)).toBe('half_open');
  });

  it('is degraded while its recent error rate is high, and healthy again as the failures age', () => {
    const breaker = new CircuitBreaker(settings);
    for (let i = 0; i < 6; i++) breaker.succeeded(T0);
    expect(breaker.state(T0)).toBe('healthy');
    breaker.failed(undefined, T0);
    breaker.failed(undefined, T0);
    expect(breaker.errorRate(T0)).toBeCloseTo(2 / 9, 6);
    breaker.succeeded(T0);
    breaker.failed(undefined, T0);
    expect(breaker.state(T0)).toBe('degraded');
    expect(breaker.admits(T0)).toBe(true);
    // The counts decay (30 s time constant) towards the assumed success.
    expect(breaker.state(T0 + 120_000)).toBe('healthy');
  });
});

describe('DeploymentHealth', () => {
  const health = (extra: Partial<ConstructorParameters<typeof DeploymentHealth>[0]> = {}) =>
    new DeploymentHealth({ ...settings, latencyDecayMs: 10_000, ...extra });

  it('scores latency × (1 + in flight); a lease is released once, however often it is called', () => {
    const deployments = health();
    deployments.succeeded(east, 200, T0);
    expect(deployments.score(east, T0)).toBe(200);
    const lease = deployments.begin(east, T0);
    const second = deployments.begin(east, T0);
    expect(deployments.inFlight(east)).toBe(2);
    expect(deployments.score(east, T0)).toBe(600);
    lease.release();
    lease.release();
    expect(deployments.inFlight(east)).toBe(1);
    second.release();
    expect(deployments.inFlight(east)).toBe(0);
  });

  it('counts a first byte within the same millisecond as 1 ms, so load still weighs on a very fast deployment', () => {
    const deployments = health();
    deployments.succeeded(east, 0, T0);
    const lease = deployments.begin(east, T0);
    expect(deployments.score(east, T0)).toBe(2);
    lease.release();
  });

  it('an unknown deployment looks free until it has a request in flight, then expensive until it answers', () => {
    const deployments = health();
    expect(deployments.score(west, T0)).toBe(0);
    const lease = deployments.begin(west, T0);
    expect(deployments.score(west, T0)).toBeGreaterThan(1e8);
    lease.release();
  });

  it('a failure can raise the latency estimate, never lower it (a fast refusal is not a fast deployment)', () => {
    const deployments = health({ failuresToOpen: 100 });
    deployments.succeeded(east, 500, T0);
    deployments.failed(east, undefined, T0, 2);
    deployments.succeeded(west, 500, T0);
    deployments.failed(west, undefined, T0, 5000);
    // Same error rate (one failure in two attempts): the scores differ by the latency alone.
    expect(deployments.score(east, T0)).toBeCloseTo(500 / (1 - 1 / 3), 6);
    expect(deployments.score(west, T0)).toBeCloseTo(5000 / (1 - 1 / 3), 6);
  });

  it('snapshot() lists each deployment seen with its provider and state', () => {
    const deployments = health();
    deployments.succeeded(east, 10, T0);
    for (let i = 0; i < 3; i++) deployments.failed(west, undefined, T0);
    expect(deployments.snapshot(T0)).toEqual([
      { deployment: 'east', provider: 'openai', state: 'healthy' },
      { deployment: 'west', provider: 'azure', state: 'open' },
    ]);
    expect(deployments.snapshot(T0 + 1000)[1]).toEqual({ deployment: 'west', provider: 'azure', state: 'half_open' });
  });

  it('a half-open deployment scores below any other (an unmeasured one too), so its probe goes first, and is unavailable while the probe is out', () => {
    const deployments = health();
    for (let i = 0; i < 3; i++) deployments.failed(west, undefined, T0, 10_000);
    expect(deployments.isAvailable(west, T0)).toBe(false);
    expect(deployments.score(west, T0 + 1000)).toBeLessThan(deployments.score(east, T0 + 1000));
    const probe = deployments.begin(west, T0 + 1000);
    expect(deployments.isAvailable(west, T0 + 1000)).toBe(false);
    probe.release();
    expect(deployments.isAvailable(west, T0 + 1000)).toBe(true);
  });
});

describe('shared health (MemoryHealthBus)', () => {
  const settled = () => new Promise((resolve) => setImmediate(resolve));
  const instance = (bus: MemoryHealthBus, id: string) => new DeploymentHealth({ ...settings, openMs: 60_000, latencyDecayMs: 10_000, bus, instanceId: id });

  it('a breaker one instance opens is open in the other; the probe’s success closes it in both', async () => {
    const bus = new MemoryHealthBus();
    const heard: HealthNotice[] = [];
    bus.subscribe((notice) => void heard.push(notice));
    const one = instance(bus, 'one');
    const two = instance(bus, 'two');
    for (let i = 0; i < 3; i++) one.failed(west, undefined);
    await settled();
    expect(heard).toEqual([{ deployment: 'west', state: 'open', forMs: 60_000, from: 'one' }]);
    expect(two.isCooling(west)).toBe(true);
    expect(two.isAvailable(east)).toBe(true);
    // Back from half-open in the first: it tells the second.
    const later = Date.now() + 60_000;
    expect(one.state(west, later)).toBe('half_open');
    one.succeeded(west, 50, later);
    await settled();
    expect(heard.at(-1)).toEqual({ deployment: 'west', state: 'closed', from: 'one' });
    expect(two.isCooling(west)).toBe(false);
    expect(two.state(west)).toBe('healthy');
  });

  it('shares a 429’s backoff, ignores its own notices, and a late instance reads the ones in force', async () => {
    const bus = new MemoryHealthBus();
    const one = instance(bus, 'one');
    one.failed(east, 20_000);
    await settled();
    expect(one.isCooling(east)).toBe(true);
    const late = instance(bus, 'late');
    await settled();
    // Known from the bus alone, its provider is not known yet: the snapshot waits for it.
    expect(late.snapshot()).toEqual([]);
    expect(late.state(east)).toBe('open');
    expect(late.snapshot()).toEqual([{ deployment: 'east', provider: 'openai', state: 'open' }]);
    // Its own notice coming back does not touch an instance (a closed one from itself neither).
    bus.publish({ deployment: 'east', state: 'closed', from: 'one' });
    await settled();
    expect(one.isCooling(east)).toBe(true);
    expect(late.isCooling(east)).toBe(false);
  });

  it('ignores malformed notices, and holds a deployment open no longer than its own longest open time', async () => {
    // A bus that hands over whatever arrives, as one decoding a network's messages might.
    let deliver: (notice: unknown) => void = () => {};
    const bus: HealthBus = {
      publish: () => {},
      subscribe: (listener) => {
        deliver = listener as typeof deliver;
        return () => {};
      },
    };
    const two = new DeploymentHealth({ ...settings, openMs: 60_000, latencyDecayMs: 10_000, bus, instanceId: 'two' });
    for (const notice of [
      null,
      'open',
      { state: 'open', from: 'x' },
      { deployment: 'east', state: 'open', forMs: -5, from: 'x' },
      { deployment: 'east', state: 'weird', forMs: 5, from: 'x' },
    ]) {
      deliver(notice);
    }
    expect(two.isCooling(east)).toBe(false);
    deliver({ deployment: 'east', state: 'open', forMs: 1e12, from: 'x' });
    expect(two.isCooling(east)).toBe(true);
    expect(two.isCooling(east, Date.now() + 60_001)).toBe(false);
  });
});

describe('the routing options', () => {
  it.each([
    [{ routing: { latencyDecayMs: 0 } }, 'options.policies.routing.latencyDecayMs must be a positive integer'],
    [{ routing: { degradedErrorRate: 2 } }, 'options.policies.routing.degradedErrorRate must be a number in (0, 1]'],
    [{ routing: { maxOpenMs: -1 } }, 'options.policies.routing.maxOpenMs must be an integer >= 0'],
    [{ healthBus: { publish: () => {} } }, 'options.policies.healthBus must be a HealthBus (publish, subscribe)'],
    [{ instanceId: '' }, 'options.policies.instanceId must be a non-empty string'],
  ])('refuses a bad one at start: %j', (policies, message) => {
    expect(() => createGateway({ keys: [{ key: 'sk-a' }], policies: policies as never, logger: false })).toThrow(message);
  });
});
