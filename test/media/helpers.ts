import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll } from 'vitest';
import { createGateway, type Gateway, type GatewayOptions } from '../../src/index.js';
import { createArkProvider } from '../../src/providers/ark/ark-provider.js';
import { createLocalProvider, localModels } from '../../src/providers/local/local-provider.js';
import { createOpenAIProvider } from '../../src/providers/openai/openai-provider.js';
import type { ModelEntry } from '../../src/routing/model.js';
import { startFakeArk, type FakeArk } from '../fakes/fake-ark.js';
import { startFakeOpenAIMedia, type FakeOpenAIMedia } from '../fakes/fake-openai-media.js';
import { freePort, serve, type Served } from '../helpers/serve.js';

export { freePort };

export const KEY = 'sk-media-test';
export const OTHER_KEY = 'sk-media-other';
export const auth = { authorization: `Bearer ${KEY}` };
export const jsonHeaders = { ...auth, 'content-type': 'application/json' };

/** The media models of the tests: local ones, and others on fake OpenAI and Ark upstreams. */
export function mediaModels(): ModelEntry[] {
  return [
    ...localModels('local'),
    { id: 'gpt-image', provider: 'oai', kind: 'image', family: 'gpt-image', upstreamModel: 'gpt-image-1' },
    { id: 'oai-image', provider: 'oai', kind: 'image', upstreamModel: 'gpt-image-1.5' },
    { id: 'oai-speech', provider: 'oai', kind: 'speech', upstreamModel: 'gpt-4o-mini-tts' },
    { id: 'sora', provider: 'oai', kind: 'video', upstreamModel: 'sora-2' },
    { id: 'seedream', provider: 'ark', kind: 'image', family: 'seedream', upstreamModel: 'doubao-seedream-4-0-250828' },
    { id: 'seedance', provider: 'ark', kind: 'video', upstreamModel: 'doubao-seedance-1-0-pro-250528' },
    { id: 'doubao-tts', provider: 'ark', kind: 'speech', upstreamModel: 'seed-tts-1.0' },
    { id: 'ark-chat', provider: 'ark', upstreamModel: 'doubao-seed-1-6-250615' },
  ];
}

export interface Upstreams {
  openaiBaseURL: string;
  arkBaseURL: string;
  /** The fake Ark serves the speech endpoint too. */
  speechBaseURL: string;
}

/** A gateway over the local provider and (when given) the fake upstreams; not listening. */
export function mediaGateway(upstreams?: Upstreams, extra: Partial<GatewayOptions> = {}): Gateway {
  const providers = {
    local: createLocalProvider({ videoRenderMs: 400 }),
    oai: createOpenAIProvider({ baseURL: upstreams?.openaiBaseURL ?? 'http://127.0.0.1:9/v1', apiKey: 'sk-upstream-openai' }),
    ark: createArkProvider({
      baseURL: upstreams?.arkBaseURL ?? 'http://127.0.0.1:9/api/v3',
      apiKey: 'ark-upstream-key',
      speech: { baseURL: upstreams?.speechBaseURL ?? 'http://127.0.0.1:9', appId: 'app-123', accessKey: 'speech-access' },
    }),
  };
  return createGateway({
    keys: [
      { key: KEY, id: 'key_media' },
      { key: OTHER_KEY, id: 'key_other' },
    ],
    providers,
    models: mediaModels(),
    logger: false,
    videoRefreshIntervalMs: 0,
    ...extra,
  });
}

/** The gateway listening on loopback, and an OpenAI SDK client for it (with `apiKey`, default `KEY`). */
export async function served(gateway: Gateway, apiKey = KEY): Promise<{ server: Served; client: OpenAI; close(): Promise<void> }> {
  const server = await serve(gateway);
  const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey, maxRetries: 0 });
  return {
    server,
    client,
    close: async () => {
      await server.close();
      await gateway.dispose();
    },
  };
}

/**
 * Whether a program is on PATH. In CI (`CI` set) a missing tool is an error, never a silent
 * skip: `.ci/run` installs it. Locally the test is skipped with the reason printed.
 */
export function hasTool(name: string): boolean {
  try {
    execFileSync('which', [name], { stdio: 'ignore' });
    return true;
  } catch {
    if (process.env.CI) throw new Error(`${name} is required in CI (.ci/run installs it with apt-get) but is not on PATH`);
    console.warn(`[media tests] skipping the ${name} checks: ${name} is not installed (apt-get install ffmpeg)`);
    return false;
  }
}

/** Runs a tool and returns its stdout. */
export function run(command: string, args: string[]): string {
  return execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

export interface RedisHandle {
  url: string;
  stop(): Promise<void>;
}

/**
 * A Redis for the store suite: `REDIS_URL` when set (CI starts one), else a `redis-server`
 * from PATH on a free port. Neither: an error in CI; locally undefined (the caller skips, and
 * this prints why).
 */
export async function startRedis(): Promise<RedisHandle | undefined> {
  if (process.env.REDIS_URL) return { url: process.env.REDIS_URL, stop: async () => {} };
  let found = true;
  try {
    execFileSync('which', ['redis-server'], { stdio: 'ignore' });
  } catch {
    found = false;
  }
  if (!found) {
    const reason = 'REDIS_URL is not set and redis-server is not on PATH (apt-get install redis-server)';
    if (process.env.CI) throw new Error(`The Redis task store suite needs Redis: ${reason}`);
    console.warn(`[media tests] skipping the Redis suite: ${reason}`);
    return undefined;
  }
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'infergate-redis-'));
  const child: ChildProcess = spawn('redis-server', ['--bind', '127.0.0.1', '--port', String(port), '--save', '', '--appendonly', 'no', '--dir', dir], {
    stdio: 'ignore',
  });
  const url = `redis://127.0.0.1:${port}`;
  for (let attempt = 0; attempt < 100; attempt++) {
    if (await canConnect(port)) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    url,
    stop: async () => {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.end();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Reads a response body to the end. */
export async function bytesOf(response: Response): Promise<Buffer> {
  return Buffer.from(await response.arrayBuffer());
}

/** Polls `read` until `done` holds (or fails after `timeoutMs`). */
export async function waitFor<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`waitFor: timed out; last value ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export interface MediaRig {
  openaiFake: FakeOpenAIMedia;
  arkFake: FakeArk;
  app: Awaited<ReturnType<typeof served>>;
  client: OpenAI;
}

/**
 * For one test file: fake OpenAI and Ark media upstreams on loopback and a served gateway in front
 * of them, started before the file's tests and closed after. Fields are set once `beforeAll` ran.
 */
export function useMediaRig(): MediaRig {
  const rig = {} as MediaRig;
  beforeAll(async () => {
    rig.openaiFake = await startFakeOpenAIMedia();
    rig.arkFake = await startFakeArk();
    rig.app = await served(mediaGateway({ openaiBaseURL: rig.openaiFake.baseURL, arkBaseURL: rig.arkFake.baseURL, speechBaseURL: rig.arkFake.url }));
    rig.client = rig.app.client;
  });
  afterAll(async () => {
    await rig.app.close();
    await rig.openaiFake.close();
    await rig.arkFake.close();
  });
  return rig;
}

/**
 * How many times the event loop turned (a chain of `setImmediate` callbacks ran) while `work`
 * ran: 0 for work done in one task or in microtasks only, however long it took.
 */
export async function loopTurnsDuring(work: () => Promise<unknown>): Promise<number> {
  let turns = 0;
  let running = true;
  const tick = () => {
    turns++;
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  try {
    await work();
  } finally {
    running = false;
  }
  return turns;
}
