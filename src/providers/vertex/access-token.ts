import type { Dispatcher } from 'undici';
import { importPKCS8, SignJWT } from 'jose';
import { type GatewayError, isAbortError, isGatewayError } from '../../errors.js';
import { parseJson } from '../../json.js';
import { accessTokenFailure, type AccessTokens, cachedAccessTokens, type IssuedToken } from '../http/access-tokens.js';
import { readText, UpstreamClient, type UpstreamTimeouts } from '../http/upstream-client.js';
import type { ServiceAccount } from './service-account.js';

/** The scope Vertex AI takes. */
const CLOUD_PLATFORM_SCOPE = 'https://www.googleapis.com/auth/cloud-platform';
/** The longest lifetime Google grants a self-signed assertion. */
const ASSERTION_LIFETIME_S = 3600;
/** The token endpoint must answer within this; a refresh is shared, so no client's signal bounds it. */
const EXCHANGE_TIMEOUT_MS = 30_000;

export interface ServiceAccountTokenOptions {
  dispatcher?: Dispatcher | undefined;
  timeouts?: UpstreamTimeouts | undefined;
  /** The clock, in ms since epoch (tests move it). */
  now?: (() => number) | undefined;
}

/**
 * Access tokens for a service account: an RS256 JWT signed with its key (jose, on Web Crypto, so
 * the same code runs on Node, Bun and Deno) is exchanged at its `token_uri`, and the token
 * cached, refreshed in the background and its failures backed off (`cachedAccessTokens`).
 */
export function serviceAccountTokens(account: ServiceAccount, options: ServiceAccountTokenOptions = {}): AccessTokens {
  const now = options.now ?? Date.now;
  const client = new UpstreamClient({
    baseURL: account.tokenURI,
    headers: {},
    ...(options.timeouts ? { timeouts: options.timeouts } : {}),
    ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
  });
  let signingKey: Promise<CryptoKey> | undefined;

  const exchange = async (): Promise<IssuedToken> => {
    const issuedAt = Math.floor(now() / 1000);
    const assertion = await new SignJWT({ scope: CLOUD_PLATFORM_SCOPE })
      .setProtectedHeader({ alg: 'RS256', typ: 'JWT', ...(account.keyId ? { kid: account.keyId } : {}) })
      .setIssuer(account.email)
      .setAudience(account.tokenURI)
      .setIssuedAt(issuedAt)
      .setExpirationTime(issuedAt + ASSERTION_LIFETIME_S)
      .sign(await (signingKey ??= importKey(account.privateKey)));
    const form = new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion }).toString();
    return postForm(client, form);
  };

  return cachedAccessTokens(exchange, { now, close: () => client.close() });
}

async function importKey(pem: string): Promise<CryptoKey> {
  try {
    return await importPKCS8(pem, 'RS256');
  } catch (error) {
    throw tokenFailure('the service account\u2019s private_key is not a PKCS#8 RSA key', error);
  }
}

/** POSTs the assertion; the token endpoint's refusal or silence becomes a 502 saying which. */
async function postForm(client: UpstreamClient, form: string): Promise<IssuedToken> {
  let status: number;
  let text: string;
  try {
    const result = await client.post('', form, {
      signal: AbortSignal.timeout(EXCHANGE_TIMEOUT_MS),
      contentType: 'application/x-www-form-urlencoded',
      headers: { accept: 'application/json' },
    });
    status = result.status;
    text = await readText(result.body, 1024 * 1024);
  } catch (error) {
    const timedOut = (isAbortError(error) && (error as Error).name === 'TimeoutError') || (isGatewayError(error) && error.status === 504);
    throw tokenFailure(timedOut ? 'the token endpoint did not answer in time' : 'the token endpoint could not be reached', error);
  }
  const json = parseJson(text) as { access_token?: unknown; expires_in?: unknown; error?: unknown; error_description?: unknown } | undefined;
  if (status >= 400) {
    // OAuth's error shape: `{"error":"invalid_grant","error_description":"Invalid JWT Signature."}`.
    const reason = [json?.error, json?.error_description].filter((part) => typeof part === 'string' && part !== '').join(': ');
    throw tokenFailure(`the token endpoint answered ${status}${reason ? ` (${reason})` : ''}`);
  }
  if (typeof json?.access_token !== 'string' || json.access_token === '') throw tokenFailure('the token endpoint answered without an access_token');
  const expiresInS = typeof json.expires_in === 'number' && json.expires_in > 0 ? json.expires_in : ASSERTION_LIFETIME_S;
  return { token: json.access_token, expiresInS };
}

/** 502: the gateway could not authenticate to Vertex AI; why is for the operator's log (`accessTokenFailure`). */
function tokenFailure(reason: string, cause?: unknown): GatewayError {
  return accessTokenFailure('Vertex AI', reason, cause);
}
