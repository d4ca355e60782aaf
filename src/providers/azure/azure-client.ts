import type { Dispatcher } from 'undici';
import type { AccessTokens } from '../http/access-tokens.js';
import type { UpstreamBody } from '../http/upstream-body.js';
import { type UpstreamCall, UpstreamClient, type UpstreamResult, type UpstreamTimeouts } from '../http/upstream-client.js';

type CallInit = UpstreamCall & { headers?: Record<string, string>; contentType?: string };

export interface AzureClientOptions {
  /** `{resource}/openai/deployments/{deployment}` (dated API) or `{resource}/openai/v1`. */
  baseURL: string;
  /** `api-key` and the operator's extras, on every request. */
  headers: Record<string, string>;
  /** The `api-version` query parameter every deployment URL needs; none on the v1 API. */
  apiVersion?: string | undefined;
  /** Entra ID tokens sent as `Authorization: Bearer`; a 401 from Azure drops the one it refused. */
  tokens?: AccessTokens | undefined;
  timeouts?: UpstreamTimeouts | undefined;
  /** Shared by every deployment of the resource. */
  dispatcher: Dispatcher;
}

/**
 * An `UpstreamClient` for one Azure OpenAI base: the OpenAI paths the shared code sends
 * (`/chat/completions`, `/embeddings`…) get the resource's `api-version`, and each request a
 * current Entra ID token when the provider authenticates with one. Everything else is the
 * OpenAI provider's own code.
 */
export class AzureClient extends UpstreamClient {
  private readonly query: string;
  private readonly tokens: AccessTokens | undefined;

  constructor(options: AzureClientOptions) {
    super({
      baseURL: options.baseURL,
      headers: options.headers,
      dispatcher: options.dispatcher,
      ...(options.timeouts ? { timeouts: options.timeouts } : {}),
    });
    this.query = options.apiVersion === undefined ? '' : `api-version=${encodeURIComponent(options.apiVersion)}`;
    this.tokens = options.tokens;
  }

  override post(path: string, body: UpstreamBody, init: CallInit): Promise<UpstreamResult> {
    return this.authorized(init, (authorized) => super.post(this.versioned(path), body, authorized));
  }

  override get(path: string, init: CallInit): Promise<UpstreamResult> {
    return this.authorized(init, (authorized) => super.get(this.versioned(path), authorized));
  }

  override delete(path: string, init: CallInit): Promise<UpstreamResult> {
    return this.authorized(init, (authorized) => super.delete(this.versioned(path), authorized));
  }

  private versioned(path: string): string {
    if (this.query === '') return path;
    return `${path}${path.includes('?') ? '&' : '?'}${this.query}`;
  }

  /** The call with a bearer token when there are tokens; a 401 drops it so the next call gets another. */
  private async authorized(init: CallInit, send: (init: CallInit) => Promise<UpstreamResult>): Promise<UpstreamResult> {
    if (!this.tokens) return send(init);
    const token = await this.tokens.get();
    const result = await send({ ...init, headers: { ...init.headers, authorization: `Bearer ${token}` } });
    if (result.status === 401) this.tokens.invalidate(token);
    return result;
  }
}
