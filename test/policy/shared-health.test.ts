import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HealthNotice } from '../../src/policy/health-bus.js';
import { RedisHealthBus } from '../../src/redis.js';
import { deploymentsOf, rendezvousOrder } from '../../src/routing/deployments.js';
import type { ModelConfig } from '../../src/routing/model.js';
import { startFakeOpenAI } from '../fakes/fake-openai.js';
import type { FakeUpstream } from '../fakes/fake-server.js';
import { recordingLogger } from '../helpers/recording-logger.js';
import { waitFor } from '../media/helpers.js';
import { redisTargets } from '../redis/targets.js';
import { chat, type GatewayProcess, startCliProcess, stopGatewayProcesses } from './gateway-processes.js';

/**
 * Two standalone servers (`infergate --config`) whose limit store is one Redis share deployment
 * health through it by default: the deployment whose failures opened the breaker of one is
 * avoided by the other before the other has sent it anything.
 */
const targets = await redisTargets();

const gpt: ModelConfig = {
  id: 'gpt',
  deployments: [
    { id: 'east', provider: 'east', upstreamModel: 'gpt-4.1' },
    { id: 'west', provider: 'west', upstreamModel: 'gpt-4.1' },
  ],
};

/** A prompt_cache_key that rendezvous puts on `west` first (keys are shared: `promptCacheKey: 'shared'`). */
function keyPinnedToWest(): string {
  const deployments = deploymentsOf({ ...gpt, provider: 'east' });
  for (let i = 0; ; i++) if (rendezvousOrder(deployments, `pck:pin-${i}`)[0]!.id === 'west') return `pin-${i}`;
}

/** `x-infergate-route` as its fields. */
function routeOf(response: Response): Record<string, string> {
  return Object.fromEntries((response.headers.get('x-infergate-route') ?? '').split('; ').map((pair) => pair.split('=') as [string, string]));
}

describe.each(targets)('two standalone servers on one Redis share deployment health ($name)', (target) => {
  const keyPrefix = `infergate-test-${randomUUID()}:`;
  let dir: string;
  let east: FakeUpstream;
  let west: FakeUpstream;
  let instances: GatewayProcess[] = [];
  let listener: RedisHealthBus;
  const heard: HealthNotice[] = [];

  beforeAll(async () => {
    [east, west] = await Promise.all([startFakeOpenAI({ endpoints: ['chat'] }), startFakeOpenAI({ endpoints: ['chat'] })]);
    dir = await mkdtemp(join(tmpdir(), 'infergate-shared-health-'));
    const config = {
      keys: [{ key: 'sk-open', id: 'open' }],
      providers: {
        east: { type: 'openai', baseURL: `${east.url}/v1`, apiKey: 'up-key', responses: false },
        west: { type: 'openai', baseURL: `${west.url}/v1`, apiKey: 'up-key', responses: false },
      },
      models: [gpt],
      policies: {
        // No policies.healthBus: the limit store's Redis carries health too.
        limitStore: { type: 'redis', ...target.connection, keyPrefix },
        retry: { backoffMs: 1, failuresBeforeCooldown: 2, cooldownMs: 60_000 },
        promptCacheKey: 'shared',
      },
    };
    const path = join(dir, 'config.json');
    await writeFile(path, JSON.stringify(config));
    instances = await Promise.all([startCliProcess(path), startCliProcess(path)]);
    // The test's own ear on the channel: it tells when the notice is out.
    listener = new RedisHealthBus({ ...target.connection, keyPrefix, logger: recordingLogger().logger });
    listener.subscribe((notice) => heard.push(notice));
    await listener.ready();
  }, 60_000);

  afterAll(async () => {
    await stopGatewayProcesses(instances);
    await Promise.all([listener?.close(), east?.close(), west?.close(), dir && rm(dir, { recursive: true, force: true })]);
    await target.close(keyPrefix);
  });

  it("the deployment whose failures opened one server's breaker is avoided by the other from its first request", async () => {
    const [first, second] = instances as [GatewayProcess, GatewayProcess];
    const pinned = keyPinnedToWest();
    // Healthy, the pinned key goes to west from either server.
    for (const instance of instances) {
      const response = await chat(instance, 'sk-open', { prompt_cache_key: pinned });
      expect(response.status).toBe(200);
      expect(routeOf(response)).toMatchObject({ deployment: 'west', attempts: '1' });
      await response.arrayBuffer();
    }

    west.answerWith(() => ({ error: { status: 503, message: 'overloaded', type: 'server_error' } }));
    // Two failures in a row open the first server's breaker; each request is still answered, by east.
    for (let i = 0; i < 2; i++) {
      const response = await chat(first, 'sk-open', { prompt_cache_key: pinned });
      expect(response.status).toBe(200);
      expect(routeOf(response)).toMatchObject({ deployment: 'east', attempts: '2' });
      await response.arrayBuffer();
    }
    const notice = await waitFor(
      async () => heard.find((each) => each.deployment === 'west'),
      (found) => found !== undefined,
      5000,
    );
    expect(notice).toMatchObject({ deployment: 'west', state: 'open', forMs: 60_000 });

    // The second server has seen west fail not once, yet sends the pinned key to east.
    const triedWest = west.requests.length;
    for (let i = 0; i < 3; i++) {
      const response = await chat(second, 'sk-open', { prompt_cache_key: pinned });
      expect(response.status).toBe(200);
      expect(routeOf(response)).toMatchObject({ deployment: 'east', attempts: '1' });
      await response.arrayBuffer();
    }
    expect(west.requests.length).toBe(triedWest);
  });
});
