import * as oauth from 'oauth4webapi';
import type { Dispatcher } from 'undici';
import { fetch as undiciFetch } from 'undici';
import { type AccessTokens, cachedAccessTokens } from '../providers/http/access-tokens.js';
import { clientCredentialsToken } from '../providers/http/client-credentials.js';
import type { McpOAuthClientCredentials } from './mcp-options.js';

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
  const exchange = () =>
    clientCredentialsToken(`MCP server \`${server}\``, {
      server: authorizationServer,
      client,
      authentication,
      parameters,
      defaultLifetimeS: DEFAULT_LIFETIME_S,
      fetch: (url, init) => undiciFetch(url, { ...(init as object), dispatcher }) as unknown as Promise<Response>,
    });
  return cachedAccessTokens(exchange);
}
