import type { RouteContext } from '../http/route.js';
import type { CallContext, Provider } from '../providers/provider.js';
import type { ModelEntry } from '../routing/catalog.js';
import { mediaUnavailable } from './media-unavailable.js';

type MediaCapability = 'generateImage' | 'editImage' | 'synthesizeSpeech' | 'createVideo';

/** The model's provider, which must have the media call (else 501: a configuration gap, not a bad request). */
export function mediaProvider<C extends MediaCapability>(
  context: RouteContext,
  model: ModelEntry,
  capability: C,
  what: string,
): Provider & Required<Pick<Provider, C>> {
  const provider = context.options.providers[model.provider]!;
  if (typeof provider[capability] !== 'function') throw mediaUnavailable(model, what);
  return provider as Provider & Required<Pick<Provider, C>>;
}

export function callContext(context: RouteContext, model: ModelEntry): CallContext {
  return { signal: context.signal, requestId: context.requestId, key: context.key, model, serverContext: context.serverContext };
}

/** The id the upstream knows the model by. */
export function upstreamModel(model: ModelEntry): string {
  return model.upstreamModel ?? model.id;
}
