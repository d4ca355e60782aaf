import * as oauth from 'oauth4webapi';
import { accessTokenFailure, type AccessTokens, cachedAccessTokens, type IssuedToken } from '../http/access-tokens.js';

/** The scope Azure OpenAI takes for Entra ID tokens. */
export const COGNITIVE_SERVICES_SCOPE = 'https://cognitiveservices.azure.com/.default';
/** Microsoft's public cloud; sovereign clouds have their own (`https://login.microsoftonline.us`…). */
const DEFAULT_AUTHORITY = 'https://login.microsoftonline.com';
/** The token endpoint must answer within this; a refresh is shared, so no client's signal bounds it. */
const EXCHANGE_TIMEOUT_MS = 30_000;
/** Entra ID's usual lifetime, assumed when an answer leaves `expires_in` out. */
const DEFAULT_LIFETIME_S = 3600;

/** An app registration's client credentials (a service principal with the "Cognitive Services OpenAI User" role). */
export interface EntraCredentials {
  tenantId: string;
  clientId: string;
  clientSecret: string;
  /** The login host. Default `https://login.microsoftonline.com`. */
  authorityHost?: string | undefined;
}

export interface EntraTokenOptions {
  /** The clock, in ms since epoch (tests move it). */
  now?: (() => number) | undefined;
}

/**
 * Entra ID access tokens from the OAuth client-credentials grant at
 * `{authorityHost}/{tenantId}/oauth2/v2.0/token` (oauth4webapi, on the Fetch API, so the same
 * code runs on Node, Bun and Deno), cached, refreshed in the background and their failures
 * backed off (`cachedAccessTokens` in `http/access-tokens.ts`).
 */
export function entraTokens(credentials: EntraCredentials, options: EntraTokenOptions = {}): AccessTokens {
  const authority = (credentials.authorityHost ?? DEFAULT_AUTHORITY).replace(/\/+$/, '');
  const tenant = encodeURIComponent(credentials.tenantId);
  const server: oauth.AuthorizationServer = { issuer: `${authority}/${tenant}/v2.0`, token_endpoint: `${authority}/${tenant}/oauth2/v2.0/token` };
  const client: oauth.Client = { client_id: credentials.clientId };
  const authentication = oauth.ClientSecretPost(credentials.clientSecret);
  // Plain HTTP only where the operator wrote it (a local identity emulator, tests).
  const insecure = authority.startsWith('http:');

  const exchange = async (): Promise<IssuedToken> => {
    let response: Response;
    try {
      response = await oauth.clientCredentialsGrantRequest(
        server,
        client,
        authentication,
        { scope: COGNITIVE_SERVICES_SCOPE },
        { signal: AbortSignal.timeout(EXCHANGE_TIMEOUT_MS), [oauth.allowInsecureRequests]: insecure },
      );
    } catch (error) {
      const timedOut = (error as Error)?.name === 'TimeoutError';
      throw tokenFailure(timedOut ? 'the token endpoint did not answer in time' : 'the token endpoint could not be reached', error);
    }
    try {
      const answer = await oauth.processClientCredentialsResponse(server, client, response);
      const lifetime = typeof answer.expires_in === 'number' && answer.expires_in > 0 ? answer.expires_in : DEFAULT_LIFETIME_S;
      return { token: answer.access_token, expiresInS: lifetime };
    } catch (error) {
      if (error instanceof oauth.ResponseBodyError) {
        // Entra's descriptions run on with trace ids and timestamps; the first line says what is wrong.
        const description = error.error_description?.split(/\r?\n/)[0];
        throw tokenFailure(`the token endpoint answered ${error.status} (${error.error}${description ? `: ${description}` : ''})`, error);
      }
      throw tokenFailure('the token endpoint answered without a usable access token', error);
    }
  };

  return cachedAccessTokens(exchange, options.now ? { now: options.now } : {});
}

function tokenFailure(reason: string, cause?: unknown) {
  return accessTokenFailure('Azure OpenAI (Entra ID)', reason, cause);
}
