import type { RequestHandlerExtra, RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';

export type ClientRequestExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/**
 * The options of one upstream request made for the client's request `extra`: the upstream's
 * progress goes to the client on that request's stream, re-addressed to the client's own
 * progress token (the SDK gives the upstream a token of its own and routes its progress to
 * `onprogress`; without a client token, that progress only restarts the call's clock:
 * `McpUpstreamClient`).
 */
export function forwardingOptions(extra: ClientRequestExtra, signal: AbortSignal): RequestOptions {
  const options: RequestOptions = { signal };
  const progressToken = extra._meta?.progressToken;
  if (progressToken !== undefined) {
    options.onprogress = (progress) =>
      void extra.sendNotification({ method: 'notifications/progress', params: { ...progress, progressToken } }).catch(() => {});
  }
  return options;
}

/** The request's `_meta` as the upstream gets it: the client's progress token is the client's own. */
export function withoutProgressToken(meta: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (!meta) return undefined;
  const { progressToken: _, ...rest } = meta;
  return Object.keys(rest).length > 0 ? rest : undefined;
}
