import type { IncomingHttpHeaders } from 'node:http';
import type { GatewayHooks, KeyRecord } from 'infergate';

/** A user of the host application, as its own database holds them. */
export interface AppUser {
  id: string;
  /** The API key the user created in the app. A real app stores a hash and compares in constant time. */
  apiKey: string;
  plan: 'free' | 'pro';
  suspended: boolean;
}

/** The host application's user table: in memory here, your database in real life. */
export const users: readonly AppUser[] = [
  { id: 'alice', apiKey: 'sk-app-alice', plan: 'pro', suspended: false },
  { id: 'bob', apiKey: 'sk-app-bob', plan: 'pro', suspended: true },
  { id: 'carol', apiKey: 'sk-app-carol', plan: 'free', suspended: false },
];

/**
 * The host's own API authentication, as its middleware would run it: the user whose key the
 * request carries (`Authorization: Bearer …`, or `x-api-key` as Anthropic clients send it).
 */
export function userForKey(authorization: string | null | undefined, apiKey: string | null | undefined): AppUser | undefined {
  const key = apiKey ?? /^Bearer\s+(\S+)$/i.exec(authorization ?? '')?.[1];
  return key ? users.find((user) => user.apiKey === key) : undefined;
}

export function userForNodeHeaders(headers: IncomingHttpHeaders): AppUser | undefined {
  const apiKey = headers['x-api-key'];
  return userForKey(headers.authorization, Array.isArray(apiKey) ? apiKey[0] : apiKey);
}

export function userForRequest(request: Request): AppUser | undefined {
  return userForKey(request.headers.get('authorization'), request.headers.get('x-api-key'));
}

/** What the gateway needs to know of a user: a non-secret id, the models (and MCP servers) of their plan, whether they may call. */
export function keyRecordFor(user: AppUser): KeyRecord {
  const pro = user.plan === 'pro';
  return { id: `user_${user.id}`, models: pro ? '*' : ['local-chat'], mcp: pro ? ['*'] : [], disabled: user.suspended, metadata: { user: user.id } };
}

/** An `onResponse` hook naming the host's user in `x-app-user`: hooks see the host's context too. */
export function userHeaderHook(userOf: (serverContext: unknown) => AppUser | undefined): NonNullable<GatewayHooks['onResponse']> {
  return function addUserHeader({ response, serverContext }) {
    const user = userOf(serverContext);
    if (user) response.headers.set('x-app-user', user.id);
  };
}
