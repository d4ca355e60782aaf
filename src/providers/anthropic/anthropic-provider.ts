import type { Dispatcher } from 'undici';
import { messagesUpstream as codec } from '../../protocols/messages/index.js';
import { eventsOf } from '../../protocols/event-batches.js';
import { postJson, streamIR } from '../http/json-call.js';
import { UpstreamClient, type UpstreamTimeouts } from '../http/upstream-client.js';
import { forwardBody } from '../http/forward-body.js';
import type { CallContext, Provider } from '../provider.js';
import type { IRRequest } from '../../protocols/ir.js';
import { anthropicTokenCounting } from './anthropic-count-tokens.js';
import { ANTHROPIC_BETAS } from './betas.js';

export interface AnthropicProviderOptions {
  /** Without `/v1`, as in the official SDK. Default `https://api.anthropic.com`. */
  baseURL?: string | undefined;
  apiKey?: string | undefined;
  /** `anthropic-version` sent when translating. Default `2023-06-01`. Passthrough keeps the client's. */
  version?: string | undefined;
  /** `anthropic-beta` sent on every request, merged with the client's on passthrough. */
  beta?: string | undefined;
  /**
   * Which of the client's `anthropic-beta` values are forwarded on passthrough: an allowlist
   * (default `ANTHROPIC_BETAS`: the betas that change only the request itself, Claude Code's
   * among them, not those that reach the account's files, skills or containers), or `'all'`.
   * Translated requests never carry the client's betas.
   */
  betas?: 'all' | readonly string[] | undefined;
  /** `max_tokens` for translated requests that set none (Anthropic requires it). Default 4096. */
  defaultMaxTokens?: number | undefined;
  headers?: Record<string, string> | undefined;
  timeouts?: UpstreamTimeouts | undefined;
  dispatcher?: Dispatcher | undefined;
}

/** Anthropic's Messages API (and servers that mimic it). */
export function createAnthropicProvider(options: AnthropicProviderOptions = {}): Provider {
  const baseURL = (options.baseURL ?? 'https://api.anthropic.com').replace(/\/+$/, '');
  const version = options.version ?? '2023-06-01';
  const client = new UpstreamClient({
    baseURL: baseURL + '/v1',
    headers: { ...options.headers, ...(options.apiKey ? { 'x-api-key': options.apiKey } : {}) },
    ...(options.timeouts ? { timeouts: options.timeouts } : {}),
    ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
  });
  const allowedBetas = options.betas === 'all' ? undefined : new Set(options.betas ?? ANTHROPIC_BETAS);
  const betaHeader = (clientBeta?: string | null): Record<string, string> => {
    const forwarded = (clientBeta ?? '')
      .split(',')
      .map((value) => value.trim())
      .filter((value) => value !== '' && (!allowedBetas || allowedBetas.has(value)));
    const beta = [options.beta, ...forwarded].filter(Boolean).join(',');
    return beta ? { 'anthropic-beta': beta } : {};
  };
  const encodeOptions = options.defaultMaxTokens ? { defaultMaxTokens: options.defaultMaxTokens } : {};

  const streamBatches = (ir: IRRequest, call: CallContext) => {
    const headers = { 'anthropic-version': version, ...betaHeader() };
    return streamIR(client, '/messages', codec.encodeRequest({ ...ir, stream: true }, encodeOptions), call, codec.streamDecoder(), headers);
  };

  return {
    type: 'anthropic',
    version: 2,
    text: {
      nativeProtocols: ['messages'],

      async passthrough({ body, rawBody, headers }, call) {
        return forwardBody(client, '/messages', rawBody ?? JSON.stringify(body), body.stream === true, call, {
          'anthropic-version': headers.get('anthropic-version') ?? version,
          ...betaHeader(headers.get('anthropic-beta')),
        });
      },

      streamBatches,

      stream(ir, call) {
        return eventsOf(streamBatches(ir, call));
      },

      async generate(ir, call) {
        const headers = { 'anthropic-version': version, ...betaHeader() };
        return codec.decodeResponse(await postJson(client, '/messages', codec.encodeRequest({ ...ir, stream: false }, encodeOptions), call, headers));
      },

      ...anthropicTokenCounting(client, (headers) => ({
        'anthropic-version': headers.get('anthropic-version') ?? version,
        ...betaHeader(headers.get('anthropic-beta')),
      })),
    },

    close: () => client.close(),
  };
}
