import type { TextProtocol } from '../protocols/ir.js';
import type { ModelEntry } from '../routing/model.js';
import type { Provider } from './provider.js';

/**
 * Whether the provider answers `protocol` on passthrough for this (deployment's) model: the one
 * answer the text pipeline and conversation state both ask.
 */
export function speaksNatively(provider: Provider | undefined, model: ModelEntry, protocol: TextProtocol): boolean {
  const text = provider?.text;
  if (!text?.passthrough) return false;
  return (text.nativeProtocolsOf?.(model) ?? text.nativeProtocols)?.includes(protocol) ?? false;
}
