import * as oauth from 'oauth4webapi';
import type { Dispatcher } from 'undici';
import { fetch as undiciFetch } from 'undici';
import { accessTokenFailure, type AccessTokens, cachedAccessTokens, type IssuedToken } from '../providers/http/access-tokens.js';
import type { McpOAuthClientCredentials } from './mcp-options.js';

/** The token endpoint must answer within this; a refresh is shared, so no client's signal bounds it. */
const EXCHANGE_TIMEOUT_MS = 30_000;
/** Assumed when an answer leaves `expires_in` out (OAuth makes it optional). */
const DEFAULT_LIFETIME_S = 3600;

/**
 * Access tokens for an upstream MCP server from the OAuth client-credentials grant at `tokenUrl`
 * (oauth4webapi, on the Fetch API), the client authenticated with its secret (HTTP Basic, or in
 * the form with `client_secret_post`). One cache per server per gateway instance: refreshed
 * before expiry, one exchange at a time whoever asks, failures backed off (`cachedAccessTokens`).
 * Checked when the gateway starts: a TypeError names the server for a config that cannot work.
 */
export function oauthTokens(server: string, credentials: McpOAuthClientCredentials, dispatcher: Dispatcher): AccessTokens {
  const where = `mcp.servers.${server}.oauth`;
  let tokenUrl: URL | undefined;
  try {
    tokenUrl = new URL(credentials.tokenUrl);
  } catch {}
  if (tokenUrl?.protocol !== 'http:' && tokenUrl?.protocol !== 'https:') throw new TypeError(`${where}.tokenUrl must be an http(s) URL`);
  if (!credentials.clientId || !credentials.clientSecret) throw new TypeError(`${where}: clientId and clientSecret are required`);
  const authMethod = credentials.authMethod ?? 'client_secret_basic';
  if (authMethod !== 'client_secret_basic' && authMethod !== 'client_secret_post') {
    throw new TypeError(`${where}.authMethod must be client_secret_basic or client_secret_post`);
  }
  const authorizationServer: oauth.AuthorizationServer = { issuer: tokenUrl.origin, token_endpoint: tokenUrl.href };
  const client: oauth.Client = { client_id: credentials.clientId };
  const authentication =
    authMethod === 'client_secret_post' ? oauth.ClientSecretPost(credentials.clientSecret) : oauth.ClientSecretBasic(credentials.clientSecret);
  const parameters = new URLSearchParams();
  if (credentials.scope) parameters.set('scope', credentials.scope);
  if (credentials.audience) {
    parameters.set('audience', credentials.audience);
    if (URL.canParse(credentials.audience)) parameters.set('resource', credentials.audience);
  }
  const service = `MCP server \`${server}\``;

  const exchange = async (): Promise<IssuedToken> => {
    let response: Response;
    try {
      response = await oauth.clientCredentialsGrantRequest(authorizationServer, client, authentication, parameters, {
        signal: AbortSignal.timeout(EXCHANGE_TIMEOUT_MS),
        // Plain HTTP only where the operator wrote it (a local identity server, tests).
        [oauth.allowInsecureRequests]: tokenUrl.protocol === 'http:',
        [oauth.customFetch]: (url, init) => undiciFetch(url, { ...(init as object), dispatcher }) as unknown as Promise<Response>,
      });
    } catch (error) {
      const timedOut = (error as Error)?.name === 'TimeoutError';
      throw accessTokenFailure(service, timedOut ? 'the token endpoint did not answer in time' : 'the token endpoint could not be reached', error);
    }
    try {
      const answer = await oauth.processClientCredentialsResponse(authorizationServer, client, response);
      const lifetime = typeof answer.expires_in === 'number' && answer.expires_in > 0 ? answer.expires_in : DEFAULT_LIFETIME_S;
      return { token: answer.access_token, expiresInS: lifetime };
    } catch (error) {
      if (error instanceof oauth.ResponseBodyError) {
        const description = error.error_description?.split(/\r?\n/)[0];
        throw accessTokenFailure(service, `the token endpoint answered ${error.status} (${error.error}${description ? `: ${description}` : ''})`, error);
      }
      // A 401 for the client's authentication comes with a challenge (RFC 6749 §5.2), not read as a body.
      if (error instanceof oauth.WWWAuthenticateChallengeError)
        throw accessTokenFailure(service, `the token endpoint refused the client's credentials (${error.status})`, error);
      throw accessTokenFailure(service, 'the token endpoint answered without a usable access token', error);
    }
  };
  return cachedAccessTokens(exchange);
}
