import { describe, expect, it } from 'vitest';
import {
  cachedAccessTokens,
  type IssuedToken,
  MAX_RETRY_AFTER_FAILURE_MS,
  REFRESH_BEFORE_EXPIRY_MS,
  RETRY_AFTER_FAILURE_MS,
} from '../../src/providers/http/access-tokens.js';

const HOUR_S = 3600;

/**
 * A token cache over an exchange the test answers itself, on a clock the test moves (no real
 * waiting): `exchanges` lists the exchanges asked for, each settled with `issue` or `fail`.
 */
function harness() {
  let now = Date.UTC(2030, 0, 1);
  const exchanges: { resolve(token: IssuedToken): void; reject(error: unknown): void }[] = [];
  const tokens = cachedAccessTokens(() => new Promise<IssuedToken>((resolve, reject) => exchanges.push({ resolve, reject })), { now: () => now });
  let issued = 0;
  return {
    tokens,
    exchanges,
    advance: (ms: number) => void (now += ms),
    /** Answers the last exchange with a new token living `lifetimeS`. */
    issue(lifetimeS = HOUR_S) {
      const token = `token-${++issued}`;
      exchanges.at(-1)!.resolve({ token, expiresInS: lifetimeS });
      return token;
    },
    fail(message = 'the token endpoint answered 503') {
      exchanges.at(-1)!.reject(new Error(message));
    },
    /** A first token living `lifetimeS`, cached. */
    async warm(lifetimeS = HOUR_S) {
      const first = tokens.get();
      const token = this.issue(lifetimeS);
      await first;
      return token;
    },
  };
}

/** What `promise` settles to before the event loop turns once more, or `'waiting'`. */
async function settledNow<T>(promise: Promise<T>): Promise<T | 'waiting' | { failed: string }> {
  const turn = new Promise<'waiting'>((resolve) => setImmediate(() => resolve('waiting')));
  return Promise.race([promise.catch((error: Error) => ({ failed: error.message })), turn]);
}

describe('cached access tokens', () => {
  it('cold: every caller waits on one exchange, then the token is reused', async () => {
    const h = harness();
    const callers = [h.tokens.get(), h.tokens.get(), h.tokens.get()];
    expect(h.exchanges).toHaveLength(1);
    const token = h.issue();
    expect(await Promise.all(callers)).toEqual([token, token, token]);
    h.advance(30 * 60_000);
    expect(await settledNow(h.tokens.get())).toBe(token);
    expect(h.exchanges).toHaveLength(1);
  });

  it('near its expiry the valid token is served at once while one exchange runs in the background', async () => {
    const h = harness();
    const token = await h.warm();
    h.advance(HOUR_S * 1000 - REFRESH_BEFORE_EXPIRY_MS + 1000);
    // The exchange hangs: nobody waits for it.
    expect(await settledNow(h.tokens.get())).toBe(token);
    expect(await settledNow(h.tokens.get())).toBe(token);
    expect(h.exchanges).toHaveLength(2);

    const next = h.issue();
    await settledNow(Promise.resolve());
    expect(await settledNow(h.tokens.get())).toBe(next);
    expect(h.exchanges).toHaveLength(2);
  });

  it('a failed background refresh is retried after a backoff, not by the next request', async () => {
    const h = harness();
    const token = await h.warm();
    h.advance(HOUR_S * 1000 - REFRESH_BEFORE_EXPIRY_MS);
    expect(await settledNow(h.tokens.get())).toBe(token);
    h.fail();
    await settledNow(Promise.resolve());

    for (let i = 0; i < 5; i++) expect(await settledNow(h.tokens.get())).toBe(token);
    expect(h.exchanges).toHaveLength(2);
    h.advance(RETRY_AFTER_FAILURE_MS);
    expect(await settledNow(h.tokens.get())).toBe(token);
    expect(h.exchanges).toHaveLength(3);
    h.fail();
    await settledNow(Promise.resolve());
    // The wait doubles after each failure.
    h.advance(RETRY_AFTER_FAILURE_MS);
    expect(await settledNow(h.tokens.get())).toBe(token);
    expect(h.exchanges).toHaveLength(3);
    h.advance(RETRY_AFTER_FAILURE_MS);
    expect(await settledNow(h.tokens.get())).toBe(token);
    expect(h.exchanges).toHaveLength(4);
  });

  it('waits only once no valid token is left, and then fails with the exchange’s error', async () => {
    const h = harness();
    await h.warm();
    h.advance(HOUR_S * 1000 - REFRESH_BEFORE_EXPIRY_MS);
    await h.tokens.get();
    h.fail();
    await settledNow(Promise.resolve());
    h.advance(REFRESH_BEFORE_EXPIRY_MS);
    // Expired: this caller waits for the exchange it starts.
    const waiting = h.tokens.get();
    expect(await settledNow(waiting)).toBe('waiting');
    h.fail('invalid_grant');
    expect(await settledNow(waiting)).toEqual({ failed: 'invalid_grant' });
  });

  it('without a token, a failure is answered at once until its backoff ends; the backoff stops at its cap', async () => {
    const h = harness();
    let failures = 0;
    for (let wait = RETRY_AFTER_FAILURE_MS; failures < 8; wait = Math.min(wait * 2, MAX_RETRY_AFTER_FAILURE_MS)) {
      const caller = h.tokens.get();
      h.fail(`failure ${++failures}`);
      expect(await settledNow(caller)).toEqual({ failed: `failure ${failures}` });
      h.advance(wait - 1);
      expect(await settledNow(h.tokens.get())).toEqual({ failed: `failure ${failures}` });
      h.advance(1);
    }
    expect(h.exchanges).toHaveLength(8);
    const recovered = h.tokens.get();
    const token = h.issue();
    expect(await recovered).toBe(token);
  });

  it('a token shorter-lived than the refresh margin is cached and replaced at half its life', async () => {
    const h = harness();
    const token = await h.warm(60);
    h.advance(29_000);
    expect(await settledNow(h.tokens.get())).toBe(token);
    expect(h.exchanges).toHaveLength(1);
    h.advance(1000);
    expect(await settledNow(h.tokens.get())).toBe(token);
    expect(h.exchanges).toHaveLength(2);
  });

  it('a token the upstream refused is dropped: the next caller waits on a new exchange', async () => {
    const h = harness();
    const token = await h.warm();
    h.tokens.invalidate('another-token');
    expect(await settledNow(h.tokens.get())).toBe(token);
    h.tokens.invalidate(token);
    const next = h.tokens.get();
    expect(await settledNow(next)).toBe('waiting');
    expect(await settledNow(next)).toBe('waiting');
    const fresh = h.issue();
    expect(await next).toBe(fresh);
  });
});
