import type { AccessTokens } from './access-tokens.js';
import type { UpstreamBody } from './upstream-body.js';
import { type UpstreamCall, UpstreamClient, type UpstreamClientOptions, type UpstreamResult } from './upstream-client.js';

/** What one request carries: the client's signal, and the request's own headers and content type. */
export type CallInit = UpstreamCall & { headers?: Record<string, string>; contentType?: string };

export interface BearerClientOptions extends UpstreamClientOptions {
  /** OAuth access tokens sent as `Authorization: Bearer` on every request; none: the client's own headers authenticate. */
  tokens?: AccessTokens | undefined;
}

/**
 * An `UpstreamClient` whose requests carry a current OAuth access token (Vertex AI; Azure OpenAI
 * with Entra ID). A token the upstream refuses with **401** is dropped, so the next request gets
 * another. A 403 is not about the token (Vertex answers it for a model that is not enabled, a
 * VPC-SC perimeter, an org policy): dropping a valid shared token then would make every request
 * of every client wait on a new exchange, at whatever rate a client provokes 403s.
 */
export class BearerClient extends UpstreamClient {
  private readonly tokens: AccessTokens | undefined;

  constructor(options: BearerClientOptions) {
    const { tokens, ...client } = options;
    super(client);
    this.tokens = tokens;
  }

  override post(path: string, body: UpstreamBody, init: CallInit): Promise<UpstreamResult> {
    return this.authorized(init, (authorized) => super.post(path, body, authorized));
  }

  override get(path: string, init: CallInit): Promise<UpstreamResult> {
    return this.authorized(init, (authorized) => super.get(path, authorized));
  }

  override delete(path: string, init: CallInit): Promise<UpstreamResult> {
    return this.authorized(init, (authorized) => super.delete(path, authorized));
  }

  private async authorized(init: CallInit, send: (init: CallInit) => Promise<UpstreamResult>): Promise<UpstreamResult> {
    if (!this.tokens) return send(init);
    const token = await this.tokens.get();
    const result = await send({ ...init, headers: { ...init.headers, authorization: `Bearer ${token}` } });
    if (result.status === 401) this.tokens.invalidate(token);
    return result;
  }
}
