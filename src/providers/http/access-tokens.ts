import { GatewayError } from '../../errors.js';

/** Where a provider's OAuth access tokens come from (Vertex AI, Azure OpenAI with Entra ID). */
export interface AccessTokens {
  /** A token valid for a while yet: the cached one, or a fresh one every waiting caller shares. */
  get(): Promise<string>;
  /** Forgets `token` after the upstream refused it (revoked, clock skew), so the next call fetches another. */
  invalidate(token: string): void;
  close(): Promise<void>;
}

/** A token from an exchange, and how long it lives. */
export interface IssuedToken {
  token: string;
  expiresInS: number;
}

/** A token this close to its expiry is replaced before use (google-auth-library and MSAL refresh 5 minutes early too). */
export const REFRESH_BEFORE_EXPIRY_MS = 5 * 60_000;

export interface CachedTokenOptions {
  /** The clock, in ms since epoch (tests move it). */
  now?: (() => number) | undefined;
  /** Releases what the exchange holds (its connection pool). */
  close?: (() => Promise<void>) | undefined;
}

/**
 * Tokens from `exchange`, cached and replaced `REFRESH_BEFORE_EXPIRY_MS` before they expire;
 * concurrent callers wait on one exchange. A refresh that fails while the cached token is still
 * valid falls back to that token; otherwise the exchange's error is thrown.
 */
export function cachedAccessTokens(exchange: () => Promise<IssuedToken>, options: CachedTokenOptions = {}): AccessTokens {
  const now = options.now ?? Date.now;
  let cached: { token: string; expiresAt: number } | undefined;
  let pending: Promise<string> | undefined;

  const refresh = async (): Promise<string> => {
    try {
      const issued = await exchange();
      cached = { token: issued.token, expiresAt: now() + issued.expiresInS * 1000 };
      return issued.token;
    } catch (error) {
      if (cached && now() < cached.expiresAt) return cached.token;
      throw error;
    }
  };

  return {
    get() {
      if (cached && now() < cached.expiresAt - REFRESH_BEFORE_EXPIRY_MS) return Promise.resolve(cached.token);
      pending ??= refresh().finally(() => {
        pending = undefined;
      });
      return pending;
    },
    invalidate(token) {
      if (cached?.token === token) cached = undefined;
    },
    close: options.close ?? (async () => {}),
  };
}

/** A token the host keeps fresh itself (`accessToken`), sent as it is. */
export function fixedAccessToken(token: string): AccessTokens {
  return { get: () => Promise.resolve(token), invalidate() {}, close: async () => {} };
}

/**
 * The host's own source (`getAccessToken`: workload identity, a metadata server, its own
 * credential library), asked on every call: such sources cache on their side. `service` names
 * the upstream in the failure's message.
 */
export function callbackAccessTokens(getAccessToken: () => string | Promise<string>, service: string): AccessTokens {
  return {
    async get() {
      let token: unknown;
      try {
        token = await getAccessToken();
      } catch (error) {
        throw accessTokenFailure(service, `getAccessToken failed: ${(error as Error)?.message ?? String(error)}`, error);
      }
      if (typeof token !== 'string' || token === '') throw accessTokenFailure(service, 'getAccessToken returned no token');
      return token;
    },
    invalidate() {},
    close: async () => {},
  };
}

/** 502: the gateway could not authenticate to `service`; the message says why, for the operator. */
export function accessTokenFailure(service: string, reason: string, cause?: unknown): GatewayError {
  return new GatewayError({
    status: 502,
    type: 'upstream_error',
    code: 'upstream_token_failed',
    message: `${service} access token unavailable: ${reason}.`,
    cause,
  });
}
