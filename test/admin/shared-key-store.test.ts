import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { testDatabase, type TestDatabase } from '../helpers/postgres.js';
import { chat, startCliProcess, stopGatewayProcesses, type GatewayProcess } from '../policy/gateway-processes.js';

/**
 * Two standalone servers (`dist/cli.js`) sharing one key store: a key made through one's admin
 * API works on the other, and a key revoked on one is refused by both within a second. Run on
 * PostgreSQL and on Redis, the real ones.
 */

const ADMIN_KEY = 'admin-key-0123456789abcdef';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6390';

let dir: string;
let database: TestDatabase;
const running: GatewayProcess[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'infergate-shared-keys-'));
  database = await testDatabase();
});
afterEach(async () => {
  await stopGatewayProcesses(running.splice(0));
});
afterAll(async () => {
  await database.close();
  await rm(dir, { recursive: true, force: true });
});

/** Two servers on one config: the local provider as model `gpt`, the admin key, and the stores given. */
async function startPair(stores: Record<string, unknown>): Promise<[GatewayProcess, GatewayProcess]> {
  const path = join(dir, `config-${Math.random().toString(36).slice(2)}.json`);
  const config = {
    keys: [{ key: 'sk-static-config-key', id: 'static' }],
    providers: { offline: { type: 'local', chunkDelayMs: 0 } },
    models: [{ id: 'gpt', provider: 'offline', upstreamModel: 'local-chat' }],
    admin: { key: ADMIN_KEY },
    ...stores,
  };
  await writeFile(path, JSON.stringify(config));
  const pair = await Promise.all([startCliProcess(path), startCliProcess(path)]);
  running.push(...pair);
  return pair;
}

function admin(instance: GatewayProcess, path: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${new URL(instance.url).origin}/admin${path}`, {
    ...init,
    headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
  });
}

/** The ms it took until `check` held, polling; fails past `deadlineMs`. */
async function within(deadlineMs: number, check: () => Promise<boolean>): Promise<number> {
  const start = Date.now();
  for (;;) {
    if (await check()) return Date.now() - start;
    if (Date.now() - start > deadlineMs) throw new Error(`not true within ${deadlineMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function statusOf(instance: GatewayProcess, key: string): Promise<number> {
  const response = await chat(instance, key);
  await response.body?.cancel();
  return response.status;
}

/** Made on A, works on B; revoked on A, refused by both within a second. */
async function revokedEverywhereWithinASecond([a, b]: [GatewayProcess, GatewayProcess]): Promise<{ id: string; key: string }> {
  const created = await admin(a, '/keys', { method: 'POST', body: JSON.stringify({ name: 'shared' }) });
  expect(created.status).toBe(201);
  const { id, key } = (await created.json()) as { id: string; key: string };
  await within(1000, async () => (await statusOf(b, key)) === 200);
  // Both instances have the key in their lookup caches now: the revocation must reach them.
  expect(await statusOf(a, key)).toBe(200);
  expect(await statusOf(b, key)).toBe(200);

  const revoked = await admin(a, `/keys/${id}`, { method: 'DELETE' });
  expect(revoked.status).toBe(200);
  await Promise.all([within(1000, async () => (await statusOf(a, key)) === 401), within(1000, async () => (await statusOf(b, key)) === 401)]);
  // B's admin API sees it revoked too, and the config file's key still works on both.
  expect(((await (await admin(b, `/keys/${id}`)).json()) as { revokedAt?: number }).revokedAt).toEqual(expect.any(Number));
  expect(await statusOf(a, 'sk-static-config-key')).toBe(200);
  expect(await statusOf(b, 'sk-static-config-key')).toBe(200);
  return { id, key };
}

describe('two standalone servers sharing a PostgreSQL key store and request log', () => {
  it('a key made on A works on B; revoked on A, refused by both within a second; B logs what A served', async () => {
    const url = database.url;
    const pair = await startPair({
      keyStore: { type: 'postgres', url, schema: database.schema },
      requestLog: { type: 'postgres', url, schema: database.schema, flushMs: 50 },
    });
    const [a, b] = pair;
    expect(await (await admin(a, '/status')).json()).toMatchObject({ keyStore: 'postgres', requestLog: 'postgres' });

    const { id } = await revokedEverywhereWithinASecond(pair);
    // The requests served by A and by B under the key are rows of the one log, read on either.
    await within(5000, async () => {
      const logs = (await (await admin(b, `/logs?keyId=${id}`)).json()) as { data: { httpStatus: number }[] };
      return logs.data.length === 3;
    });
    // GET /v1/usage on either reads the log's daily rollups: the config key's requests served by A and B.
    await within(5000, async () => {
      const usage = await fetch(`${a.url}/v1/usage`, { headers: { authorization: 'Bearer sk-static-config-key' } });
      const rows = ((await usage.json()) as { data: { model: string; requests: number }[] }).data;
      return rows.length === 1 && rows[0]!.model === 'gpt' && rows[0]!.requests === 2;
    });
    const audit = (await (await admin(b, `/audit?keyId=${id}`)).json()) as { data: { action: string; actor: string; address?: string }[] };
    expect(audit.data.map((entry) => [entry.action, entry.actor])).toEqual([
      ['revoke', 'admin'],
      ['create', 'admin'],
    ]);
    expect(audit.data[0]!.address).toMatch(/127\.0\.0\.1/);
  });
});

describe('two standalone servers sharing a Redis key store', () => {
  it('a key made on A works on B; revoked on A, refused by both within a second', async () => {
    const pair = await startPair({ keyStore: { type: 'redis', url: REDIS_URL, keyPrefix: `test-${process.pid}-${Date.now()}:` } });
    expect(await (await admin(pair[0], '/status')).json()).toMatchObject({ keyStore: 'redis', requestLog: 'memory' });
    await revokedEverywhereWithinASecond(pair);
  });
});

describe('the start-up of a standalone server on PostgreSQL', () => {
  it('says where keys and rows go, without the database password', async () => {
    const url = new URL(database.url);
    url.password = 'hunter2-not-printed';
    const path = join(dir, 'startup.json');
    const stores = { url: url.href, schema: database.schema };
    await writeFile(
      path,
      JSON.stringify({
        keys: [{ key: 'sk-static-config-key' }],
        admin: { key: ADMIN_KEY },
        keyStore: { type: 'postgres', ...stores },
        requestLog: { type: 'postgres', ...stores },
      }),
    );
    const cli = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));
    const child = spawn(process.execPath, [cli, '--config', path, '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    await new Promise<void>((resolve, reject) => {
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        stdout += chunk;
        if (/^Models: /m.test(stdout)) resolve();
      });
      child.once('exit', (code) => reject(new Error(`exited ${code}: ${stdout}`)));
    });
    child.kill('SIGTERM');
    const where = `${url.host}${url.pathname}, schema ${database.schema}`;
    expect(stdout).toMatch(/^Dashboard: http:\/\/127\.0\.0\.1:\d+\/admin\/ /m);
    expect(stdout).toContain(`Keys made at run time: in PostgreSQL (${where})`);
    expect(stdout).toContain(`Request log: in PostgreSQL (${where}; GET /v1/usage reads its daily totals)`);
    expect(stdout).not.toContain('hunter2');
    await new Promise((resolve) => (child.exitCode !== null ? resolve(null) : child.once('exit', resolve)));
  });
});
