import type { Dispatcher } from 'undici';
import type { AccessTokens } from '../http/access-tokens.js';
import { BearerClient, type CallInit } from '../http/bearer-client.js';
import type { UpstreamBody } from '../http/upstream-body.js';
import type { UpstreamResult, UpstreamTimeouts } from '../http/upstream-client.js';

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
export class AzureClient extends BearerClient {
  private readonly query: string;

  constructor(options: AzureClientOptions) {
    super({
      baseURL: options.baseURL,
      headers: options.headers,
      dispatcher: options.dispatcher,
      tokens: options.tokens,
      ...(options.timeouts ? { timeouts: options.timeouts } : {}),
    });
    this.query = options.apiVersion === undefined ? '' : `api-version=${encodeURIComponent(options.apiVersion)}`;
  }

  override post(path: string, body: UpstreamBody, init: CallInit): Promise<UpstreamResult> {
    return super.post(this.versioned(path), body, init);
  }

  override get(path: string, init: CallInit): Promise<UpstreamResult> {
    return super.get(this.versioned(path), init);
  }

  override delete(path: string, init: CallInit): Promise<UpstreamResult> {
    return super.delete(this.versioned(path), init);
  }

  private versioned(path: string): string {
    if (this.query === '') return path;
    return `${path}${path.includes('?') ? '&' : '?'}${this.query}`;
  }
}
