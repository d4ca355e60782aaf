import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { type Dispatcher, fetch as undiciFetch } from 'undici';
import type { AccessTokens } from '../providers/http/access-tokens.js';

/**
 * How the gateway's HTTP requests reach an upstream MCP server: through the gateway's pooled
 * dispatcher, with the server's credentials set on each (after the transport's own headers, whose
 * names the config may not use: `upstream-headers.ts`). With OAuth, the current token is asked
 * for on every request (so a refreshed one is used at once), and a 401 makes the token be
 * dropped and the request sent once more with a fresh one (revoked, or expired early).
 */
export function upstreamFetch(dispatcher: Dispatcher, headers: Record<string, string>, tokens?: AccessTokens): FetchLike {
  const send = (url: string | URL, init: RequestInit | undefined, token: string | undefined): Promise<Response> => {
    const merged = new Headers(init?.headers);
    for (const [name, value] of Object.entries(headers)) merged.set(name, value);
    if (token !== undefined) merged.set('authorization', `Bearer ${token}`);
    // undici's own fetch takes its dispatcher (the global one may be another undici version's).
    return undiciFetch(url, { ...(init as object), headers: Object.fromEntries(merged.entries()), dispatcher }) as unknown as Promise<Response>;
  };
  if (!tokens) return (url, init) => send(url, init, undefined);
  return async (url, init) => {
    const token = await tokens.get();
    const response = await send(url, init, token);
    if (response.status !== 401) return response;
    await response.body?.cancel().catch(() => {});
    tokens.invalidate(token);
    return send(url, init, await tokens.get());
  };
}
