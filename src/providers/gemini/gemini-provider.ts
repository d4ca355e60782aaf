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
      }),
    },
    embeddings: geminiEmbeddings(client, '/v1beta'),
    close: () => client.close(),
  };
}
