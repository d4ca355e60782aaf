import type { Dispatcher } from 'undici';
import { UpstreamClient, type UpstreamTimeouts } from '../http/upstream-client.js';
import type { Provider } from '../provider.js';
import { geminiEmbeddings } from './gemini-embeddings.js';
import { geminiModelPath, geminiTextCalls } from './gemini-text.js';

export interface GeminiProviderOptions {
  /** The host, without `/v1beta` (the provider adds the version path). Default `https://generativelanguage.googleapis.com`. */
  baseURL?: string | undefined;
  /** Sent as `x-goog-api-key`. */
  apiKey?: string | undefined;
  /**
   * Prefixes of the `gs://` and Files-API (`files/…`) URIs a client's `fileData` may name
   * (a prefix matches whole path segments). Google resolves them in the API key's project, so any
   * other is a 400 naming the part. Default: none. A key's `storageUris` narrow this further.
   */
  storageUris?: readonly string[] | undefined;
  headers?: Record<string, string> | undefined;
  timeouts?: UpstreamTimeouts | undefined;
  dispatcher?: Dispatcher | undefined;
}

/** Google's Gemini API (`generativelanguage.googleapis.com`), through the IR. */
export function createGeminiProvider(options: GeminiProviderOptions = {}): Provider {
  const client = new UpstreamClient({
    baseURL: (options.baseURL ?? 'https://generativelanguage.googleapis.com').replace(/\/+$/, ''),
    headers: { ...options.headers, ...(options.apiKey ? { 'x-goog-api-key': options.apiKey } : {}) },
    ...(options.timeouts ? { timeouts: options.timeouts } : {}),
    ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
  });
  return {
    type: 'gemini',
    version: 2,
    text: {
      nativeProtocols: ['gemini'],
      ...geminiTextCalls({
        client,
        path: (model, stream) => geminiModelPath('/v1beta', model, stream),
        countPath: (model) => `/v1beta/models/${encodeURIComponent(model)}:countTokens`,
        storageUris: options.storageUris,
      }),
    },
    embeddings: geminiEmbeddings(client, '/v1beta'),
    close: () => client.close(),
  };
}
