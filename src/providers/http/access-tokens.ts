import { GatewayError } from '../../errors.js';

/** Where a provider's OAuth access tokens come from (Vertex AI, Azure OpenAI with Entra ID). */
export interface AccessTokens {
  /** A usable token: the cached one, or (when none is left) a fresh one every waiting caller shares. */
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

/**
 * A token this close to its expiry is replaced, in the background, while it is still sent
 * (google-auth-library and MSAL refresh 5 minutes early too). A token that lives less than twice
 * this is replaced at half its life instead.
 */
export const REFRESH_BEFORE_EXPIRY_MS = 5 * 60_000;
/** A token is no longer sent in its last 10 seconds (a quarter of a shorter life): it could expire on the way. */
const EXPIRY_SAFETY_MS = 10_000;
/** After a failed exchange the next one waits this long, twice as long after each further failure… */
export const RETRY_AFTER_FAILURE_MS = 1000;
/** …up to this: an identity provider that is down gets one exchange every 30 s, not one per request. */
export const MAX_RETRY_AFTER_FAILURE_MS = 30_000;

export interface CachedTokenOptions {
  /** The clock, in ms since epoch (tests move it). */
  now?: (() => number) | undefined;
  /** Releases what the exchange holds (its connection pool). */
  close?: (() => Promise<void>) | undefined;
}

/** A cached token, and the times that govern it (ms since epoch). */
interface CachedToken {
  token: string;
  /** From then on, a background exchange replaces it. */
  refreshAt: number;
  /** Until then it is sent. */
  usableUntil: number;
}

/**
 * Tokens from `exchange`, cached. A caller waits only when no usable token is left (cold, expired,
 * or refused by the upstream); past its refresh time the cached token is still sent and one
 * exchange runs in the background. There is never more than one exchange at a time, whoever asks.
 * After a failed exchange the next waits `RETRY_AFTER_FAILURE_MS`, doubling up to
 * `MAX_RETRY_AFTER_FAILURE_MS`; meanwhile a caller without a usable token gets that failure at once.
 */
export function cachedAccessTokens(exchange: () => Promise<IssuedToken>, options: CachedTokenOptions = {}): AccessTokens {
  const now = options.now ?? Date.now;
  let cached: CachedToken | undefined;
  let exchanging: Promise<string> | undefined;
  let failure: { error: unknown; failures: number; retryAt: number } | undefined;

  const refresh = (): Promise<string> => {
    exchanging ??= exchange()
      .then(
        (issued) => {
          cached = cachedToken(issued, now());
          failure = undefined;
          return issued.token;
        },
        (error: unknown) => {
          const failures = (failure?.failures ?? 0) + 1;
          failure = { error, failures, retryAt: now() + Math.min(MAX_RETRY_AFTER_FAILURE_MS, RETRY_AFTER_FAILURE_MS * 2 ** (failures - 1)) };
          throw error;
        },
      )
      .finally(() => {
        exchanging = undefined;
      });
    return exchanging;
  };
  const backingOff = (at: number) => failure !== undefined && at < failure.retryAt;

  return {
    get() {
      const at = now();
      if (cached && at < cached.usableUntil) {
        if (at >= cached.refreshAt && !exchanging && !backingOff(at)) {
          // Its outcome is kept for the next callers (the token, or the failure and its backoff).
          refresh().catch(() => {});
        }
        return Promise.resolve(cached.token);
      }
      if (exchanging) return exchanging;
      if (backingOff(at)) return Promise.reject(failure!.error);
      return refresh();
    },
    invalidate(token) {
      if (cached?.token === token) cached = undefined;
    },
    close: options.close ?? (async () => {}),
  };
}

/** When a token issued at `at` is replaced, and until when it is sent. */
function cachedToken(issued: IssuedToken, at: number): CachedToken {
  const lifetime = issued.expiresInS * 1000;
  return {
    token: issued.token,
    refreshAt: at + lifetime - Math.min(REFRESH_BEFORE_EXPIRY_MS, lifetime / 2),
    usableUntil: at + lifetime - Math.min(EXPIRY_SAFETY_MS, lifetime / 4),
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

/**
 * 502: the gateway could not authenticate to `service`. The client learns only that: the reason
 * can name the operator's identity (a service-account e-mail, a key path, an app id), so it goes
 * to the operator's log with the request id (`GatewayError.detail`).
 */
export function accessTokenFailure(service: string, reason: string, cause?: unknown): GatewayError {
  return new GatewayError({
    status: 502,
    type: 'upstream_error',
    code: 'upstream_token_failed',
    message: `The gateway could not authenticate to ${service}.`,
    detail: `${service} access token unavailable: ${reason}.`,
    cause,
  });
}
