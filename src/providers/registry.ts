import type { ProviderConfig } from '../config.js';
import { createAnthropicProvider } from './anthropic/anthropic-provider.js';
import { createLocalProvider } from './local/local-provider.js';
import { createOpenAIProvider } from './openai/openai-provider.js';
import type { Provider } from './provider.js';

type ProviderFactory<T extends ProviderConfig['type']> = (config: Extract<ProviderConfig, { type: T }>, name: string) => Provider;

/** Volcengine Ark's OpenAI-compatible endpoints (chat and Responses), Beijing region. */
const ARK_BASE_URL = 'https://ark.cn-beijing.volces.com/api/v3';

/** One factory per provider `type` of the config file; adding a provider adds one line here. */
const providerFactories: { [T in ProviderConfig['type']]: ProviderFactory<T> } = {
  local: (config) => createLocalProvider({ chunkDelayMs: config.chunkDelayMs }),
  openai: ({ type: _type, ...options }) => createOpenAIProvider(options),
  anthropic: ({ type: _type, ...options }) => createAnthropicProvider(options),
  // Ark's text API is OpenAI-compatible, Responses included; its media calls come with the media work.
  ark: ({ type: _type, baseURL, ...options }) => ({
    ...createOpenAIProvider({ baseURL: baseURL ?? ARK_BASE_URL, responses: true, ...options }),
    type: 'ark',
  }),
};

/** Builds the provider a config file describes under `providers.<name>`. */
export function createProvider(name: string, config: ProviderConfig): Provider {
  const factory = providerFactories[config.type] as ProviderFactory<ProviderConfig['type']> | undefined;
  if (!factory) throw new TypeError(`providers.${name}.type: unknown provider type "${String(config.type)}"`);
  return factory(config, name);
}
