import type { ProviderConfig } from '../config.js';
import { createLocalProvider } from './local/local-provider.js';
import type { Provider } from './provider.js';
import { createUnavailableProvider } from './unavailable.js';

type ProviderFactory<T extends ProviderConfig['type']> = (config: Extract<ProviderConfig, { type: T }>, name: string) => Provider;

/** One factory per provider `type` of the config file; adding a provider adds one line here. */
const providerFactories: { [T in ProviderConfig['type']]: ProviderFactory<T> } = {
  local: (config) => createLocalProvider({ chunkDelayMs: config.chunkDelayMs }),
  openai: () => createUnavailableProvider('openai'),
  anthropic: () => createUnavailableProvider('anthropic'),
  ark: () => createUnavailableProvider('ark'),
};

/** Builds the provider a config file describes under `providers.<name>`. */
export function createProvider(name: string, config: ProviderConfig): Provider {
  const factory = providerFactories[config.type] as ProviderFactory<ProviderConfig['type']> | undefined;
  if (!factory) throw new TypeError(`providers.${name}.type: unknown provider type "${String(config.type)}"`);
  return factory(config, name);
}
