import * as oauth from 'oauth4webapi';
import { type AccessTokens, cachedAccessTokens, type IssuedToken } from '../http/access-tokens.js';
import { clientCredentialsToken } from '../http/client-credentials.js';

/** The scope Azure OpenAI takes for Entra ID tokens. */
export const COGNITIVE_SERVICES_SCOPE = 'https://cognitiveservices.azure.com/.default';
/** Microsoft's public cloud; sovereign clouds have their own (`https://login.microsoftonline.us`…). */
const DEFAULT_AUTHORITY = 'https://login.microsoftonline.com';
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
  const exchange = (): Promise<IssuedToken> =>
    clientCredentialsToken('Azure OpenAI (Entra ID)', {
      server,
      client,
      authentication,
      parameters: { scope: COGNITIVE_SERVICES_SCOPE },
      defaultLifetimeS: DEFAULT_LIFETIME_S,
    });

  return cachedAccessTokens(exchange, options.now ? { now: options.now } : {});
}
