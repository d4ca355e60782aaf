import * as oauth from 'oauth4webapi';
import { accessTokenFailure, type IssuedToken } from './access-tokens.js';

/** The token endpoint must answer within this; a refresh is shared, so no client's signal bounds it. */
const EXCHANGE_TIMEOUT_MS = 30_000;

/** One OAuth client-credentials exchange: where, as whom, for what. */
export interface ClientCredentialsRequest {
  server: oauth.AuthorizationServer;
  client: oauth.Client;
  authentication: oauth.ClientAuth;
  parameters: URLSearchParams | Record<string, string>;
  /** Assumed when the answer leaves `expires_in` out. */
  defaultLifetimeS: number;
  /** How to reach the endpoint (a pooled dispatcher); default the global fetch. */
  fetch?: ((url: string, init: RequestInit) => Promise<Response>) | undefined;
}

/**
 * A token from the OAuth client-credentials grant (oauth4webapi, on the Fetch API, so the same
 * code runs on Node, Bun and Deno). Its failure is a 502 for `service` whose detail says why
 * (`accessTokenFailure`): no answer in time, unreachable, refused, or no usable token.
 */
export async function clientCredentialsToken(service: string, request: ClientCredentialsRequest): Promise<IssuedToken> {
  const { server, client } = request;
  let response: Response;
  try {
    response = await oauth.clientCredentialsGrantRequest(server, client, request.authentication, request.parameters, {
      signal: AbortSignal.timeout(EXCHANGE_TIMEOUT_MS),
      // Plain HTTP only where the operator wrote it (a local identity server, tests).
      [oauth.allowInsecureRequests]: server.token_endpoint?.startsWith('http:') === true,
      ...(request.fetch ? { [oauth.customFetch]: request.fetch } : {}),
    });
  } catch (error) {
    const timedOut = (error as Error)?.name === 'TimeoutError';
    throw accessTokenFailure(service, timedOut ? 'the token endpoint did not answer in time' : 'the token endpoint could not be reached', error);
  }
  try {
    const answer = await oauth.processClientCredentialsResponse(server, client, response);
    const lifetime = typeof answer.expires_in === 'number' && answer.expires_in > 0 ? answer.expires_in : request.defaultLifetimeS;
    return { token: answer.access_token, expiresInS: lifetime };
  } catch (error) {
    if (error instanceof oauth.ResponseBodyError) {
      // Some descriptions run on with trace ids and timestamps (Entra's); the first line says what is wrong.
      const description = error.error_description?.split(/\r?\n/)[0];
      throw accessTokenFailure(service, `the token endpoint answered ${error.status} (${error.error}${description ? `: ${description}` : ''})`, error);
    }
    // A 401 for the client's authentication comes with a challenge (RFC 6749 §5.2), not read as a body.
    if (error instanceof oauth.WWWAuthenticateChallengeError)
      throw accessTokenFailure(service, `the token endpoint refused the client's credentials (${error.status})`, error);
    throw accessTokenFailure(service, 'the token endpoint answered without a usable access token', error);
  }
}
