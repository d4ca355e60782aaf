import type { ProviderConfig } from './provider-config.js';
import { createAnthropicProvider } from './anthropic/anthropic-provider.js';
import { createArkProvider } from './ark/ark-provider.js';
import { createAzureProvider } from './azure/azure-provider.js';
import { createBedrockProvider } from './bedrock/bedrock-provider.js';
import { createGeminiProvider } from './gemini/gemini-provider.js';
import { createLocalProvider } from './local/local-provider.js';
import { createOpenAIProvider } from './openai/openai-provider.js';
import type { Provider } from './provider.js';
import { createVertexProvider } from './vertex/vertex-provider.js';

type ProviderFactory<T extends ProviderConfig['type']> = (config: Extract<ProviderConfig, { type: T }>, name: string) => Provider;

/** One factory per provider `type` of the config file; adding a provider adds one line here. */
const providerFactories: { [T in ProviderConfig['type']]: ProviderFactory<T> } = {
  local: ({ type: _type, ...options }) => createLocalProvider(options),
  openai: ({ type: _type, ...options }) => createOpenAIProvider(options),
  anthropic: ({ type: _type, ...options }) => createAnthropicProvider(options),
  ark: ({ type: _type, ...options }) => createArkProvider(options),
  gemini: ({ type: _type, ...options }) => createGeminiProvider(options),
  vertex: ({ type: _type, ...options }) => createVertexProvider(options),
  azure: ({ type: _type, ...options }) => createAzureProvider(options),
  bedrock: ({ type: _type, ...options }) => createBedrockProvider(options),
};

/** Builds the provider a config file describes under `providers.<name>`. */
export function createProvider(name: string, config: ProviderConfig): Provider {
  const factory = providerFactories[config.type] as ProviderFactory<ProviderConfig['type']> | undefined;
  if (!factory) throw new TypeError(`providers.${name}.type: unknown provider type "${String(config.type)}"`);
  return factory(config, name);
}
