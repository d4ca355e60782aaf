import type { Dispatcher } from 'undici';
import { UpstreamClient, type UpstreamTimeouts } from '../http/upstream-client.js';
import { createOpenAIProvider } from '../openai/openai-provider.js';
import type { Provider } from '../provider.js';
import { arkImages } from './ark-images.js';
import { arkSpeech } from './ark-speech.js';
import { arkVideos } from './ark-videos.js';

/** Volcengine Ark, Beijing region: OpenAI-compatible text, Seedream images, Seedance videos. */
export const ARK_BASE_URL = 'https://ark.cn-beijing.volces.com/api/v3';
/** Volcengine's speech service (a separate host with its own credentials). */
export const VOLCENGINE_SPEECH_URL = 'https://openspeech.bytedance.com';

export interface ArkSpeechOptions {
  /** Default `https://openspeech.bytedance.com`. */
  baseURL?: string | undefined;
  /** The console's APP ID and Access Token (`X-Api-App-Id`, `X-Api-Access-Key`)… */
  appId?: string | undefined;
  accessKey?: string | undefined;
  /** …or a single API key (`X-Api-Key`). */
  apiKey?: string | undefined;
}

export interface ArkProviderOptions {
  /** Ark's API base, with `/api/v3`. Default `https://ark.cn-beijing.volces.com/api/v3`. */
  baseURL?: string | undefined;
  /** Ark API key (`Authorization: Bearer`). */
  apiKey?: string | undefined;
  /** Speech synthesis credentials; without them speech models on this provider answer 502 from the upstream. */
  speech?: ArkSpeechOptions | undefined;
  headers?: Record<string, string> | undefined;
  timeouts?: UpstreamTimeouts | undefined;
  /** An undici dispatcher for every call (tests). Default: a pooled Agent per upstream host. */
  dispatcher?: Dispatcher | undefined;
}

/**
 * Volcengine Ark. Text goes through the OpenAI-compatible provider (Ark serves Chat Completions
 * and Responses); Seedream images and edits, Seedance video tasks and speech are Ark's own APIs,
 * mapped in this folder (one file each).
 */
export function createArkProvider(options: ArkProviderOptions = {}): Provider {
  const baseURL = options.baseURL ?? ARK_BASE_URL;
  const common = {
    ...(options.timeouts ? { timeouts: options.timeouts } : {}),
    ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
  };
  const text = createOpenAIProvider({
    baseURL,
    responses: true,
    apiKey: options.apiKey,
    headers: options.headers,
    ...common,
  });
  const media = new UpstreamClient({
    baseURL,
    headers: { ...options.headers, ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}) },
    ...common,
  });
  const speech = new UpstreamClient({ baseURL: options.speech?.baseURL ?? VOLCENGINE_SPEECH_URL, headers: speechHeaders(options.speech), ...common });

  // Ark's text API is OpenAI's, without the stored-response, compaction and token-count endpoints.
  const { countTokens: _countTokens, storedResponse: _storedResponse, compact: _compact, ...arkText } = text.text!;

  return {
    type: 'ark',
    version: 2,
    text: arkText,
    images: arkImages(media),
    video: arkVideos(media),
    speech: arkSpeech(speech),
    async close() {
      await Promise.all([text.close?.(), media.close(), speech.close()]);
    },
  };
}

function speechHeaders(speech: ArkSpeechOptions | undefined): Record<string, string> {
  if (!speech) return {};
  return {
    ...(speech.appId ? { 'x-api-app-id': speech.appId } : {}),
    ...(speech.accessKey ? { 'x-api-access-key': speech.accessKey } : {}),
    ...(speech.apiKey ? { 'x-api-key': speech.apiKey } : {}),
  };
}
