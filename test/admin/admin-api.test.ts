import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createAdminHandler } from '../../src/admin/admin-handler.js';
import { MemoryKeyStore } from '../../src/admin/keys/memory-key-store.js';
import type { ManagedKeyStore } from '../../src/admin/keys/managed-key-store.js';
import { ChainedKeyStore } from '../../src/auth/chained-key-store.js';
import { StaticKeyStore } from '../../src/auth/key-store.js';
import { createGateway } from '../../src/gateway.js';
import { MemoryRequestLog } from '../../src/logs/memory-request-log.js';
import { createLocalProvider, LOCAL_CHAT_MODEL, localModels } from '../../src/providers/local/local-provider.js';
import { serve, type Served } from '../helpers/serve.js';
import { errorRow, logRow } from '../logs/log-rows.js';

const ADMIN_KEY = 'admin-key-0123456789abcdef';
const GATEWAY_KEY = 'sk-static-gateway-key-0001';

interface Setup {
  served: Served;
  keys: ManagedKeyStore;
  log: MemoryRequestLog;
  /** A request to the admin API with the admin key (`auth: null` sends none). */
  admin(path: string, init?: RequestInit & { auth?: string | null; json?: unknown }): Promise<Response>;
}

/** The gateway (config-file key, then the managed store) and the admin API on one server, as the standalone server mounts them. */
async function start(): Promise<Setup> {
  const keys = new MemoryKeyStore();
  const log = new MemoryRequestLog({ size: 100 });
  const gateway = createGateway({
    keys: new ChainedKeyStore([new StaticKeyStore([{ key: GATEWAY_KEY }]), keys]),
    providers: { local: createLocalProvider({ chunkDelayMs: 0 }) },
    models: localModels('local'),
    requestLog: log,
    logger: false,
  });
  const adminHandler = createAdminHandler({
    key: ADMIN_KEY,
    keys,
    log,
    health: () => [{ deployment: 'local/local-chat', provider: 'local', state: 'healthy' as const }],
    logger: false,
  });
  const served = await serve((req, res) => (req.url?.startsWith('/admin') ? adminHandler(req, res) : gateway(req, res)));
  return {
    served,
    keys,
    log,
    admin(path, init = {}) {
      const { auth = ADMIN_KEY, json, ...rest } = init;
      const headers = new Headers(rest.headers);
      if (auth !== null) headers.set('authorization', `Bearer ${auth}`);
      if (json !== undefined) headers.set('content-type', 'application/json');
      return fetch(served.url + '/admin' + path, { ...rest, headers, ...(json !== undefined ? { body: JSON.stringify(json) } : {}) });
    },
  };
}

async function errorOf(response: Response): Promise<{ status: number; message: string; type: string; param: string | null; code: string | null }> {
  const body = (await response.json()) as { error: { message: string; type: string; param: string | null; code: string | null } };
  return { status: response.status, ...body.error };
}

function openai(url: string, key: string): OpenAI {
  return new OpenAI({ baseURL: url + '/v1', apiKey: key, maxRetries: 0 });
}

const hello = { model: LOCAL_CHAT_MODEL, messages: [{ role: 'user' as const, content: 'Hello' }] };

let setup: Setup;
beforeAll(async () => {
  setup = await start();
});
afterAll(async () => {
  await setup.served.close();
});
afterEach(() => {
  vi.restoreAllMocks();
});

describe('admin API: credentials', () => {
  it('answers 401 invalid_admin_key with www-authenticate to no key, a wrong key, and a valid gateway key', async () => {
    for (const auth of [null, 'not-the-admin-key-at-all', GATEWAY_KEY]) {
      const response = await setup.admin('/keys', { auth });
      expect(response.headers.get('www-authenticate')).toBe('Bearer');
      expect(await errorOf(response)).toEqual({
        status: 401,
        message: expect.stringContaining('admin key'),
        type: 'invalid_request_error',
        param: null,
        code: 'invalid_admin_key',
      });
    }
    // The gateway key does work on the gateway: it is refused only as an admin key.
    expect((await openai(setup.served.url, GATEWAY_KEY).chat.completions.create(hello)).choices[0]!.message.content).toBeTruthy();
  });

  it('tells nothing of its paths or methods without the key', async () => {
    expect((await setup.admin('/nothing-here', { auth: null })).status).toBe(401);
    expect((await setup.admin('/keys', { auth: null, method: 'PUT' })).status).toBe(401);
  });

  it('serves the dashboard without the key, and sends <base> to <base>/', async () => {
    const page = await setup.admin('/', { auth: null });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    const redirect = await fetch(setup.served.url + '/admin', { redirect: 'manual' });
    expect(redirect.status).toBe(308);
    expect(new URL(redirect.headers.get('location')!, setup.served.url + '/admin').pathname).toBe('/admin/');
  });

  it('refuses a short admin key, and both or neither of key and authorize', () => {
    const keys = new MemoryKeyStore();
    expect(() => createAdminHandler({ key: 'short', keys })).toThrow(/at least 16/);
    expect(() => createAdminHandler({ keys })).toThrow(/exactly one of key/);
    expect(() => createAdminHandler({ key: ADMIN_KEY, authorize: () => ({ name: 'x' }), keys })).toThrow(/exactly one of key/);
    expect(() => createAdminHandler({ key: ADMIN_KEY, keys: {} as ManagedKeyStore })).toThrow(/ManagedKeyStore/);
  });

  it("takes a host's own authorize: its actor is audited, undefined is a 401", async () => {
    const keys = new MemoryKeyStore();
    const handler = createAdminHandler({
      keys,
      authorize: (request) => (request.headers.get('x-user') === 'carol' ? { name: 'carol', address: '198.51.100.4' } : undefined),
    });
    expect((await handler.fetch('http://host.test/admin/keys', { headers: { authorization: `Bearer ${ADMIN_KEY}` } })).status).toBe(401);
    const created = await handler.fetch('http://host.test/admin/keys', {
      method: 'POST',
      headers: { 'x-user': 'carol', 'content-type': 'application/json' },
      body: '{"name":"ci"}',
    });
    expect(created.status).toBe(201);
    const audit = await keys.audit({ limit: 10 });
    expect(audit.data[0]).toMatchObject({ actor: 'carol', address: '198.51.100.4', action: 'create' });
  });
});

describe('admin API: keys', () => {
  it('creates a key (shown once), reads, lists and audits it; the audit names the admin and the client address, never the key', async () => {
    const settings = {
      name: 'ci',
      models: [LOCAL_CHAT_MODEL],
      group: 'team',
      limits: { requestsPerMinute: 60 },
      budget: { usd: 5, period: '1d' },
      metadata: { owner: 'ops' },
    };
    const response = await setup.admin('/keys', { method: 'POST', json: settings });
    expect(response.status).toBe(201);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const created = (await response.json()) as { id: string; key: string; prefix: string };
    expect(created).toMatchObject({
      ...settings,
      id: expect.stringMatching(/^key_/),
      key: expect.stringMatching(/^sk-ig-/),
      disabled: false,
    });
    expect(created.key.startsWith(created.prefix)).toBe(true);

    const read = await (await setup.admin(`/keys/${created.id}`)).text();
    expect(JSON.parse(read)).toMatchObject({ id: created.id, name: 'ci' });
    expect(read).not.toContain(created.key);
    const list = (await (await setup.admin('/keys')).json()) as { object: string; data: { id: string }[] };
    expect(list.object).toBe('list');
    expect(list.data.map((key) => key.id)).toContain(created.id);

    const audit = await setup.admin(`/audit?keyId=${created.id}`);
    const auditText = await audit.text();
    expect(auditText).not.toContain(created.key);
    expect(JSON.parse(auditText)).toMatchObject({ object: 'list', data: [{ action: 'create', actor: 'admin', address: '127.0.0.1', keyId: created.id }] });
  });

  it('pages the list with limit and next, and shows revoked keys only when asked', async () => {
    const { keys, served } = await start();
    try {
      const admin = (path: string, init: RequestInit = {}) =>
        fetch(served.url + '/admin' + path, { ...init, headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' } });
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push((await keys.create({ name: `k${i}` }, { name: 'test' })).key.id);
      await admin(`/keys/${ids[0]}`, { method: 'DELETE' });
      const seen: string[] = [];
      let path = '/keys?limit=2';
      for (let pages = 0; pages < 10; pages++) {
        const page = (await (await admin(path)).json()) as { data: { id: string }[]; next?: string };
        expect(page.data.length).toBeLessThanOrEqual(2);
        seen.push(...page.data.map((key) => key.id));
        if (!page.next) break;
        path = `/keys?limit=2&cursor=${encodeURIComponent(page.next)}`;
      }
      expect(seen).toEqual(ids.slice(1).reverse());
      const all = (await (await admin('/keys?limit=500&includeRevoked=true')).json()) as { data: { id: string; revokedAt?: number }[] };
      expect(all.data.map((key) => key.id)).toEqual([...ids].reverse());
      expect(all.data.at(-1)!.revokedAt).toEqual(expect.any(Number));
    } finally {
      await served.close();
    }
  });

  it('updates with PATCH (null clears a field) and audits before and after', async () => {
    const { key } = await setup.keys.create({ name: 'before', limits: { requestsPerMinute: 5 }, models: '*' }, { name: 'test' });
    const response = await setup.admin(`/keys/${key.id}`, { method: 'PATCH', json: { name: 'after', limits: null, disabled: true } });
    expect(response.status).toBe(200);
    const updated = (await response.json()) as Record<string, unknown>;
    expect(updated).toMatchObject({ id: key.id, name: 'after', disabled: true });
    expect(updated.limits).toBeUndefined();
    const audit = (await (await setup.admin(`/audit?keyId=${key.id}&limit=1`)).json()) as { data: { action: string; before: unknown; after: unknown }[] };
    expect(audit.data[0]).toMatchObject({
      action: 'update',
      before: { name: 'before', limits: { requestsPerMinute: 5 } },
      after: { name: 'after', disabled: true },
    });
  });

  it('revokes with DELETE (revokedAt set); a revoked key cannot be changed or rotated (409 key_revoked)', async () => {
    const { key } = await setup.keys.create({}, { name: 'test' });
    const revoked = await setup.admin(`/keys/${key.id}`, { method: 'DELETE' });
    expect(revoked.status).toBe(200);
    expect(((await revoked.json()) as { revokedAt?: number }).revokedAt).toEqual(expect.any(Number));
    expect(await errorOf(await setup.admin(`/keys/${key.id}`, { method: 'PATCH', json: { name: 'x' } }))).toMatchObject({ status: 409, code: 'key_revoked' });
    expect(await errorOf(await setup.admin(`/keys/${key.id}/rotate`, { method: 'POST' }))).toMatchObject({ status: 409, code: 'key_revoked' });
  });

  it('answers 404 key_not_found for an unknown id on every key route', async () => {
    const routes: [string, string, unknown?][] = [
      ['GET', '/keys/key_nope'],
      ['PATCH', '/keys/key_nope', { name: 'x' }],
      ['DELETE', '/keys/key_nope'],
      ['POST', '/keys/key_nope/rotate', {}],
    ];
    for (const [method, path, json] of routes) {
      expect(await errorOf(await setup.admin(path, { method, json }))).toMatchObject({ status: 404, code: 'key_not_found', param: 'id' });
    }
  });

  it('answers 405 with allow, and 404 for an unknown path', async () => {
    const response = await setup.admin('/keys', { method: 'PUT' });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST, GET');
    expect((await setup.admin('/keys/key_x/rotate', { method: 'GET' })).headers.get('allow')).toBe('POST');
    expect(await errorOf(await setup.admin('/nothing'))).toMatchObject({ status: 404, code: 'not_found' });
  });
});

describe('admin API: bad bodies and parameters are 400s naming the field', () => {
  const cases: [string, unknown, string | null, string][] = [
    ['an unknown field', { name: 'x', colour: 'red' }, 'colour', 'unknown_parameter'],
    ['an unknown nested field', { limits: { requestsPerMinute: 1, perDay: 2 } }, 'limits.perDay', 'unknown_parameter'],
    ['a negative limit', { limits: { requestsPerMinute: -1 } }, 'limits.requestsPerMinute', 'invalid_value'],
    ['models of the wrong type', { models: 'gpt' }, 'models', 'invalid_value'],
    ['an empty model id', { models: [''] }, 'models[0]', 'invalid_value'],
    ['a budget without dollars', { budget: { period: '1d' } }, 'budget', 'invalid_value'],
    ['a bad budget period', { budget: { usd: 1, period: 'fortnight' } }, 'budget', 'invalid_value'],
    ['disabled as a string', { disabled: 'yes' }, 'disabled', 'invalid_value'],
    ['metadata as an array', { metadata: [1] }, 'metadata', 'invalid_value'],
    ['a name too long', { name: 'n'.repeat(201) }, 'name', 'invalid_value'],
    ['a field in another case', { Name: 'x' }, 'Name', 'invalid_parameter'],
  ];
  for (const [what, body, param, code] of cases) {
    it(`POST /keys: ${what}`, async () => {
      const error = await errorOf(await setup.admin('/keys', { method: 'POST', json: body }));
      expect(error).toMatchObject({ status: 400, type: 'invalid_request_error', param });
      if (code !== 'invalid_parameter') expect(error.code).toBe(code);
    });
  }

  it('names every unknown field at once, at any depth', async () => {
    const error = await errorOf(await setup.admin('/keys', { method: 'POST', json: { colour: 1, limits: { perDay: 2, perHour: 3 }, size: 2 } }));
    expect(error).toMatchObject({ status: 400, param: 'colour', code: 'unknown_parameter' });
    expect(error.message).toBe("Unknown fields 'colour', 'limits.perDay', 'limits.perHour', 'size'.");
  });

  it('names the unknown field and the fields allowed there', async () => {
    const error = await errorOf(await setup.admin('/keys', { method: 'POST', json: { limits: { perDay: 2 } } }));
    expect(error).toMatchObject({ status: 400, param: 'limits.perDay', code: 'unknown_parameter' });
    expect(error.message).toBe("Unknown field 'limits.perDay': unknown field (allowed: requestsPerMinute, tokensPerMinute, concurrentRequests, quota).");
  });

  it('PATCH takes null to clear but refuses what POST refuses', async () => {
    const { key } = await setup.keys.create({}, { name: 'test' });
    expect(await errorOf(await setup.admin(`/keys/${key.id}`, { method: 'PATCH', json: { limits: { rpm: 1 } } }))).toMatchObject({
      status: 400,
      param: 'limits.rpm',
    });
    expect(await errorOf(await setup.admin(`/keys/${key.id}`, { method: 'PATCH', json: { group: '' } }))).toMatchObject({ status: 400, param: 'group' });
  });

  it('refuses bad JSON, a body that is not an object, a wrong content type, and a body over 64 KiB (413)', async () => {
    const post = (body: string, type = 'application/json') => setup.admin('/keys', { method: 'POST', body, headers: { 'content-type': type } });
    expect(await errorOf(await post('{"name":'))).toMatchObject({ status: 400, code: 'invalid_json' });
    expect(await errorOf(await post('[1]'))).toMatchObject({ status: 400, code: 'invalid_body' });
    expect(await errorOf(await post('{"name":"x"}', 'text/plain'))).toMatchObject({ status: 400, code: 'invalid_content_type' });
    expect(await errorOf(await post(JSON.stringify({ metadata: { blob: 'x'.repeat(64 * 1024) } })))).toMatchObject({ status: 413, code: 'request_too_large' });
    expect(await errorOf(await post('{"name":"a","name":"b"}'))).toMatchObject({ status: 400, param: 'name' });
  });

  it('rotate: graceSeconds 0..2592000, integer', async () => {
    const { key } = await setup.keys.create({}, { name: 'test' });
    for (const graceSeconds of [-1, 2_592_001, 1.5, '60']) {
      expect(await errorOf(await setup.admin(`/keys/${key.id}/rotate`, { method: 'POST', json: { graceSeconds } }))).toMatchObject({
        status: 400,
        param: 'graceSeconds',
      });
    }
    expect(await errorOf(await setup.admin(`/keys/${key.id}/rotate`, { method: 'POST', json: { grace: 1 } }))).toMatchObject({ status: 400, param: 'grace' });
  });

  const queries: [string, string][] = [
    ['/keys?limit=0', 'limit'],
    ['/keys?limit=501', 'limit'],
    ['/keys?limit=ten', 'limit'],
    ['/keys?limit=1&limit=2', 'limit'],
    ['/keys?includeRevoked=yes', 'includeRevoked'],
    ['/keys?cursor=not-a-cursor', 'cursor'],
    ['/keys?keyid=x', 'keyid'],
    ['/audit?cursor=zzz', 'cursor'],
    ['/logs?status=fine', 'status'],
    ['/logs?status=99', 'status'],
    ['/logs?from=yesterday', 'from'],
    ['/logs?from=2026-01-02&to=2026-01-01', 'from'],
    ['/logs?cursor=nope', 'cursor'],
    ['/tool-calls?outcome=fine', 'outcome'],
    ['/tool-calls?from=yesterday', 'from'],
    ['/tool-calls?from=2026-01-02&to=2026-01-01', 'from'],
    ['/tool-calls?cursor=nope', 'cursor'],
    ['/tool-calls?model=x', 'model'],
    ['/stats?bucket=week', 'bucket'],
    ['/stats?by=provider', 'by'],
    ['/stats?from=0&bucket=hour', 'from'],
    ['/stats?to=2026-01-01T00:00:00Z&from=2026-01-01T00:00:00Z', 'from'],
    ['/status?verbose=1', 'verbose'],
  ];
  for (const [path, param] of queries) {
    it(`GET ${path}: 400 naming '${param}'`, async () => {
      expect(await errorOf(await setup.admin(path))).toMatchObject({ status: 400, type: 'invalid_request_error', param });
    });
  }
});

describe('admin API: the request log, status and health', () => {
  it('filters the log by key, model, status and time (ms or ISO), pages it, and reads one row', async () => {
    const now = Date.now();
    const rows = [
      logRow({ keyId: 'key-logs', model: 'm1', startedAt: now - 3000 }),
      errorRow({ keyId: 'key-logs', model: 'm1', startedAt: now - 2000, httpStatus: 502 }),
      logRow({ keyId: 'key-logs', model: 'm2', startedAt: now - 1000 }),
      logRow({ keyId: 'key-other', model: 'm1', startedAt: now - 500 }),
    ];
    for (const row of rows) setup.log.write(row);
    const ids = async (query: string) =>
      ((await (await setup.admin(`/logs?${query}`)).json()) as { data: { requestId: string }[] }).data.map((row) => row.requestId);
    expect(await ids('keyId=key-logs')).toEqual([rows[2]!.requestId, rows[1]!.requestId, rows[0]!.requestId]);
    expect(await ids('keyId=key-logs&model=m1')).toEqual([rows[1]!.requestId, rows[0]!.requestId]);
    expect(await ids('keyId=key-logs&status=error')).toEqual([rows[1]!.requestId]);
    expect(await ids('keyId=key-logs&status=502')).toEqual([rows[1]!.requestId]);
    expect(await ids('keyId=key-logs&status=ok&model=')).toEqual([rows[2]!.requestId, rows[0]!.requestId]);
    expect(await ids(`keyId=key-logs&from=${now - 2500}&to=${now - 1000}`)).toEqual([rows[1]!.requestId]);
    expect(await ids(`keyId=key-logs&from=${new Date(now - 2500).toISOString()}`)).toEqual([rows[2]!.requestId, rows[1]!.requestId]);

    const first = (await (await setup.admin('/logs?keyId=key-logs&limit=2')).json()) as { data: unknown[]; next: string };
    expect(first.data).toHaveLength(2);
    const second = (await (await setup.admin(`/logs?keyId=key-logs&limit=2&cursor=${first.next}`)).json()) as { data: { requestId: string }[]; next?: string };
    expect(second.data.map((row) => row.requestId)).toEqual([rows[0]!.requestId]);
    expect(second.next).toBeUndefined();

    expect(await (await setup.admin(`/logs/${rows[1]!.requestId}`)).json()).toEqual(rows[1]);
    expect(await errorOf(await setup.admin('/logs/req_missing'))).toMatchObject({ status: 404, code: 'request_not_found', param: 'requestId' });
  });

  it('answers stats for the last day by hour and model by default, and for a range asked', async () => {
    const now = Date.now();
    setup.log.write(logRow({ keyId: 'key-stats', model: 'stats-model', startedAt: now - 60_000, costUsd: 1.5 }));
    const stats = (await (await setup.admin('/stats?keyId=key-stats')).json()) as {
      series: { name: string; points: unknown[] }[];
      totals: { requests: number; costUsd: number };
    };
    expect(stats.totals).toMatchObject({ requests: 1, costUsd: 1.5 });
    expect(stats.series.map((series) => series.name)).toEqual(['stats-model']);
    expect(stats.series[0]!.points.length).toBeGreaterThanOrEqual(24);
    const byKey = (await (await setup.admin(`/stats?keyId=key-stats&by=key&bucket=day&from=${now - 86_400_000 * 3}&to=${now + 1}`)).json()) as {
      series: { name: string }[];
    };
    expect(byKey.series.map((series) => series.name)).toEqual(['key-stats']);
  });

  it('/status names the stores, the sink counters and the version; /health the deployments', async () => {
    const status = (await (await setup.admin('/status')).json()) as Record<string, unknown>;
    expect(status).toMatchObject({ keyStore: 'memory', requestLog: 'memory', sink: { written: expect.any(Number), dropped: 0 }, version: expect.any(String) });
    expect(await (await setup.admin('/health')).json()).toEqual({ deployments: [{ deployment: 'local/local-chat', provider: 'local', state: 'healthy' }] });
  });

  it('answers 404 on /logs, /tool-calls and /stats without a log, and null for it in /status', async () => {
    const handler = createAdminHandler({ key: ADMIN_KEY, keys: new MemoryKeyStore() });
    const get = (path: string) => handler.fetch(`http://host.test/admin${path}`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
    for (const path of ['/logs', '/logs/req_1', '/tool-calls', '/stats']) expect((await get(path)).status).toBe(404);
    expect(await (await get('/status')).json()).toMatchObject({ keyStore: 'memory', requestLog: null });
    expect(await (await get('/health')).json()).toEqual({ deployments: [] });
  });

  it('answers 503 store_unavailable when a store fails, and logs the cause, not a masked 500', async () => {
    const errors: unknown[] = [];
    const keys = new MemoryKeyStore();
    keys.create = () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:5432'));
    const handler = createAdminHandler({ key: ADMIN_KEY, keys, logger: { info() {}, warn() {}, error: (_message, fields) => errors.push(fields) } });
    const response = await handler.fetch('http://host.test/admin/keys', {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(response.headers.get('retry-after')).toBe('1');
    expect(await errorOf(response)).toMatchObject({ status: 503, code: 'store_unavailable' });
    expect(JSON.stringify(errors)).toContain('ECONNREFUSED');
  });

  it('mounts at another basePath', async () => {
    const handler = createAdminHandler({ key: ADMIN_KEY, keys: new MemoryKeyStore(), basePath: '/ops/admin/' });
    const headers = { authorization: `Bearer ${ADMIN_KEY}` };
    expect((await handler.fetch('http://host.test/ops/admin/status', { headers })).status).toBe(200);
    expect((await handler.fetch('http://host.test/admin/status', { headers })).status).toBe(404);
  });
});

describe('a key made through the admin API, used with the openai SDK', () => {
  it('works on the gateway, is logged under its id, and is refused (401) once revoked', async () => {
    const created = (await (await setup.admin('/keys', { method: 'POST', json: { name: 'sdk' } })).json()) as { id: string; key: string };
    const client = openai(setup.served.url, created.key);
    const completion = await client.chat.completions.create(hello);
    expect(completion.choices[0]!.message.content).toBeTruthy();
    const logged = (await (await setup.admin(`/logs?keyId=${created.id}`)).json()) as { data: { model: string; status: string }[] };
    expect(logged.data).toEqual([expect.objectContaining({ model: LOCAL_CHAT_MODEL, status: 'ok' })]);

    expect((await setup.admin(`/keys/${created.id}`, { method: 'DELETE' })).status).toBe(200);
    const refused = await client.chat.completions.create(hello).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.AuthenticationError);
    expect((refused as InstanceType<typeof OpenAI.AuthenticationError>).status).toBe(401);
  });

  it('a disabled key is refused until enabled again', async () => {
    const created = (await (await setup.admin('/keys', { method: 'POST', json: { disabled: true } })).json()) as { id: string; key: string };
    const client = openai(setup.served.url, created.key);
    await expect(client.chat.completions.create(hello)).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
    await setup.admin(`/keys/${created.id}`, { method: 'PATCH', json: { disabled: false } });
    expect((await client.chat.completions.create(hello)).choices).toHaveLength(1);
  });

  it('rotate: the old key works during the grace period, the new one at once, the old one is refused after', async () => {
    const created = (await (await setup.admin('/keys', { method: 'POST', json: { name: 'rotating' } })).json()) as { id: string; key: string };
    const rotated = await setup.admin(`/keys/${created.id}/rotate`, { method: 'POST', json: { graceSeconds: 60 } });
    expect(rotated.status).toBe(200);
    const body = (await rotated.json()) as { id: string; key: string; previousExpiresAt: number };
    expect(body.id).toBe(created.id);
    expect(body.key).not.toBe(created.key);
    expect(body.previousExpiresAt - Date.now()).toBeGreaterThan(50_000);

    const oldClient = openai(setup.served.url, created.key);
    const newClient = openai(setup.served.url, body.key);
    expect((await oldClient.chat.completions.create(hello)).choices).toHaveLength(1);
    expect((await newClient.chat.completions.create(hello)).choices).toHaveLength(1);

    // A minute and a second later (Node's clock moved, not waited for): the old key is refused.
    const realNow = Date.now.bind(Date);
    vi.spyOn(Date, 'now').mockImplementation(() => realNow() + 61_000);
    await expect(oldClient.chat.completions.create(hello)).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
    expect((await newClient.chat.completions.create(hello)).choices).toHaveLength(1);
    vi.restoreAllMocks();

    const audit = (await (await setup.admin(`/audit?keyId=${created.id}`)).json()) as { data: { action: string }[] };
    expect(audit.data.map((entry) => entry.action)).toEqual(['rotate', 'create']);
  });

  it('rotate without a body keeps the old key for a day; with graceSeconds 0 it stops at once', async () => {
    const { key, secret } = await setup.keys.create({}, { name: 'test' });
    const rotated = (await (await setup.admin(`/keys/${key.id}/rotate`, { method: 'POST' })).json()) as { key: string; previousExpiresAt: number };
    expect(rotated.previousExpiresAt - Date.now()).toBeGreaterThan(86_000_000);
    expect((await openai(setup.served.url, secret).chat.completions.create(hello)).choices).toHaveLength(1);
    const again = (await (await setup.admin(`/keys/${key.id}/rotate`, { method: 'POST', json: { graceSeconds: 0 } })).json()) as { key: string };
    await expect(openai(setup.served.url, rotated.key).chat.completions.create(hello)).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
    expect((await openai(setup.served.url, again.key).chat.completions.create(hello)).choices).toHaveLength(1);
  });
});
