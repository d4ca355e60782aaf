import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config.js';
import { isGatewayError } from '../../src/errors.js';
import { callbackAccessTokens, REFRESH_BEFORE_EXPIRY_MS, RETRY_AFTER_FAILURE_MS } from '../../src/providers/http/access-tokens.js';
import { serviceAccountTokens } from '../../src/providers/vertex/access-token.js';
import { readServiceAccount } from '../../src/providers/vertex/service-account.js';
import { createVertexProvider } from '../../src/providers/vertex/vertex-provider.js';
import { type FakeVertex, startFakeVertex } from '../fakes/fake-vertex.js';

/** Service-account access tokens against the fake token endpoint, which verifies every JWT. */
let fake: FakeVertex;
beforeAll(async () => {
  fake = await startFakeVertex();
});
afterAll(() => fake.close());
beforeEach(() => fake.reset());

/** A clock the test moves, shared with the fake (which checks `iat`/`exp` against its own). */
function clock() {
  let now = Date.now();
  const time = { now: () => now, advance: (ms: number) => void (now += ms) };
  fake.useClock(time.now);
  return time;
}

async function failureOf(promise: Promise<unknown>) {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!isGatewayError(error)) throw new Error(`expected a GatewayError, got ${String(error)}`);
  return error;
}

describe('service-account tokens', () => {
  it('signs a JWT the token endpoint accepts, and reuses the token it gets', async () => {
    const tokens = serviceAccountTokens(readServiceAccount(fake.serviceAccount));
    const first = await tokens.get();
    expect(await tokens.get()).toBe(first);
    expect(await tokens.get()).toBe(first);

    expect(fake.exchanges).toHaveLength(1);
    expect(fake.exchanges[0]!.rejected).toBeUndefined();
    expect(fake.exchanges[0]!.claims).toMatchObject({
      iss: fake.serviceAccount.client_email,
      aud: fake.tokenURI,
      scope: 'https://www.googleapis.com/auth/cloud-platform',
    });
    await tokens.close();
  });

  it('replaces the token shortly before it expires, in the background, not before', async () => {
    const time = clock();
    const tokens = serviceAccountTokens(readServiceAccount(fake.serviceAccount), { now: time.now });
    const first = await tokens.get();
    time.advance(3600_000 - REFRESH_BEFORE_EXPIRY_MS - 1000);
    expect(await tokens.get()).toBe(first);
    expect(fake.exchanges).toHaveLength(1);

    time.advance(2000);
    // Still valid: served while the exchange runs.
    expect(await tokens.get()).toBe(first);
    await expect.poll(() => tokens.get()).not.toBe(first);
    expect(fake.exchanges).toHaveLength(2);
    await tokens.close();
  });

  it('makes one exchange for concurrent callers, cold and when refreshing', async () => {
    const time = clock();
    const tokens = serviceAccountTokens(readServiceAccount(fake.serviceAccount), { now: time.now });
    const cold = await Promise.all(Array.from({ length: 5 }, () => tokens.get()));
    expect(new Set(cold).size).toBe(1);
    expect(fake.exchanges).toHaveLength(1);

    time.advance(3600_000 - REFRESH_BEFORE_EXPIRY_MS + 1000);
    const refreshing = await Promise.all(Array.from({ length: 5 }, () => tokens.get()));
    expect(refreshing).toEqual(cold);
    await expect.poll(() => tokens.get()).not.toBe(cold[0]);
    expect(fake.exchanges).toHaveLength(2);
    await tokens.close();
  });

  it('caches a token that lives less than the refresh margin, and replaces it at half its life', async () => {
    fake.scriptTokens({ expiresIn: 60 });
    const time = clock();
    const tokens = serviceAccountTokens(readServiceAccount(fake.serviceAccount), { now: time.now });
    const first = await tokens.get();
    expect(await tokens.get()).toBe(first);
    expect(await tokens.get()).toBe(first);
    expect(fake.exchanges).toHaveLength(1);
    time.advance(30_000);
    await expect.poll(() => tokens.get()).not.toBe(first);
    expect(fake.exchanges).toHaveLength(2);
    await tokens.close();
  });

  it('fetches another token after the one in use was refused', async () => {
    const tokens = serviceAccountTokens(readServiceAccount(fake.serviceAccount));
    const first = await tokens.get();
    tokens.invalidate('some-older-token');
    expect(await tokens.get()).toBe(first);
    tokens.invalidate(first);
    expect(await tokens.get()).not.toBe(first);
    expect(fake.exchanges).toHaveLength(2);
    await tokens.close();
  });

  it('fails a refused exchange as a 502 naming the cause, then recovers after a backoff', async () => {
    fake.scriptTokens({ fail: { status: 400, error: 'invalid_grant', description: 'Invalid grant: account not found' } });
    const time = clock();
    const tokens = serviceAccountTokens(readServiceAccount(fake.serviceAccount), { now: time.now });
    const error = await failureOf(tokens.get());
    expect(error.status).toBe(502);
    expect(error.code).toBe('upstream_token_failed');
    expect(error.message).toBe('The gateway could not authenticate to Vertex AI.');
    expect(error.detail).toContain('the token endpoint answered 400 (invalid_grant: Invalid grant: account not found)');

    fake.scriptTokens({});
    // Within the backoff, the same failure without another exchange.
    expect(await failureOf(tokens.get())).toBe(error);
    expect(fake.exchanges).toHaveLength(1);
    time.advance(RETRY_AFTER_FAILURE_MS);
    expect(await tokens.get()).toMatch(/^ya29\.fake-/);
    expect(fake.exchanges).toHaveLength(2);
    await tokens.close();
  });

  it('keeps the current token while it is valid when its early refresh fails, retrying after a backoff', async () => {
    const time = clock();
    const tokens = serviceAccountTokens(readServiceAccount(fake.serviceAccount), { now: time.now });
    const first = await tokens.get();
    fake.scriptTokens({ fail: { status: 503, error: 'temporarily_unavailable', description: 'try later' } });
    time.advance(3600_000 - REFRESH_BEFORE_EXPIRY_MS + 1000);
    expect(await tokens.get()).toBe(first);
    await expect.poll(() => fake.exchanges.at(-1)?.rejected).toBe('temporarily_unavailable: try later');
    // The clock has not moved past the backoff: no other exchange, whatever the number of requests.
    for (let i = 0; i < 5; i++) expect(await tokens.get()).toBe(first);
    expect(fake.exchanges).toHaveLength(2);

    // Expired: the caller waits on an exchange, and gets its failure.
    time.advance(REFRESH_BEFORE_EXPIRY_MS);
    expect((await failureOf(tokens.get())).detail).toContain('503 (temporarily_unavailable: try later)');
    await tokens.close();
  });

  it('names a key the token endpoint rejects (signed by another key)', async () => {
    const other = await startFakeVertex();
    try {
      // The other fake's key, pointed at this fake's token endpoint: the signature does not verify.
      const tokens = serviceAccountTokens(
        readServiceAccount({ ...other.serviceAccount, client_email: fake.serviceAccount.client_email, token_uri: fake.tokenURI }),
      );
      expect((await failureOf(tokens.get())).detail).toContain('invalid_grant: Invalid JWT Signature.');
      await tokens.close();
    } finally {
      await other.close();
    }
  });

  it('names an unreachable token endpoint', async () => {
    const tokens = serviceAccountTokens(readServiceAccount({ ...fake.serviceAccount, token_uri: 'http://127.0.0.1:9/token' }));
    const error = await failureOf(tokens.get());
    expect(error.status).toBe(502);
    expect(error.detail).toContain('the token endpoint could not be reached');
    await tokens.close();
  });

  it('names a private key that is not an RSA PKCS#8 key', async () => {
    const broken = { ...fake.serviceAccount, private_key: '-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n' };
    const tokens = serviceAccountTokens(readServiceAccount(broken));
    expect((await failureOf(tokens.get())).detail).toContain('private_key is not a PKCS#8 RSA key');
    expect(fake.exchanges).toHaveLength(0);
  });
});

describe('host-supplied tokens', () => {
  it('asks getAccessToken on every call and names its failure', async () => {
    let calls = 0;
    const tokens = callbackAccessTokens(async () => `host-token-${++calls}`, 'Vertex AI');
    expect(await tokens.get()).toBe('host-token-1');
    expect(await tokens.get()).toBe('host-token-2');

    const failing = callbackAccessTokens(() => Promise.reject(new Error('metadata server down')), 'Vertex AI');
    const error = await failureOf(failing.get());
    expect(error.status).toBe(502);
    expect(error.message).toBe('The gateway could not authenticate to Vertex AI.');
    expect(error.detail).toBe('Vertex AI access token unavailable: getAccessToken failed: metadata server down.');
  });
});

describe('service-account key', () => {
  it('is read from a file path, project taken from it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'vertex-key-'));
    const path = join(dir, 'service-account.json');
    writeFileSync(path, JSON.stringify(fake.serviceAccount));
    expect(readServiceAccount(path)).toMatchObject({ email: fake.serviceAccount.client_email, projectId: 'fake-project', tokenURI: fake.tokenURI });
    expect(() => createVertexProvider({ credentials: path })).not.toThrow();
  });

  it('refuses what cannot sign, without quoting the key', () => {
    expect(() => readServiceAccount('/nonexistent/key.json')).toThrow('credentials: cannot read /nonexistent/key.json: no such file');
    expect(() => readServiceAccount({ ...fake.serviceAccount, type: 'authorized_user' })).toThrow('is not a service-account key');
    expect(() => readServiceAccount({ ...fake.serviceAccount, private_key: 'secret-but-wrong' })).toThrow(/private_key is missing or not a PKCS#8 PEM key$/);
    expect(() => createVertexProvider({ credentials: fake.serviceAccount, accessToken: 'x' })).toThrow(
      'exactly one of credentials, accessToken or getAccessToken',
    );
    expect(() => createVertexProvider({ accessToken: 'x' })).toThrow('project is required');
  });
});

describe('config file', () => {
  it('builds a vertex provider from a key object or a token, and names a bad field', () => {
    const config = parseConfig({
      keys: [{ key: 'sk-test' }],
      providers: {
        vtx: { type: 'vertex', location: 'global', credentials: fake.serviceAccount },
        tok: { type: 'vertex', project: 'p', accessToken: 'ya29.host' },
      },
      models: [{ id: 'claude', provider: 'vtx', upstreamModel: 'claude-sonnet-4-5' }],
    });
    expect(config.providers.vtx).toMatchObject({ type: 'vertex', text: { nativeProtocols: ['messages'] } });
    expect(config.providers.tok).toMatchObject({ type: 'vertex' });

    expect(() =>
      parseConfig({ keys: [{ key: 'sk-test' }], providers: { vtx: { type: 'vertex', credentials: 42 } }, models: [{ id: 'm', provider: 'vtx' }] }),
    ).toThrow('providers.vtx.credentials: expected a path or a service-account key object');
    expect(() =>
      parseConfig({ keys: [{ key: 'sk-test' }], providers: { vtx: { type: 'vertex', project: 'p' } }, models: [{ id: 'm', provider: 'vtx' }] }),
    ).toThrow('providers.vtx: vertex: give exactly one of credentials, accessToken or getAccessToken');
  });
});
