import type { RouteContext } from '../http/route.js';
import { runWithFallback } from '../policy/fallback.js';
import type { RequestLedger } from '../policy/request-ledger.js';
import { withLedger } from '../policy/ledger-frame.js';
import type {
  CallContext,
  EmbeddingCapability,
  ImageCapability,
  Provider,
  SpeechCapability,
  TranscriptionCapability,
  VideoCapability,
} from '../providers/provider.js';
import type { ModelEntry, ModelKind } from '../routing/model.js';
import { modelOnDeployment } from '../routing/deployments.js';
import { routeOrderOf } from '../routing/route-headers.js';
import { mediaUnavailable } from './media-unavailable.js';
import { callContext, routePlan } from './upstream-call.js';

/** Which call of which capability a media route needs. */
type MediaCapability = 'images.generate' | 'images.edit' | 'speech' | 'video' | 'embeddings' | 'transcriptions';
type MediaProvider<C extends MediaCapability> = Provider &
  (C extends 'images.generate'
    ? { images: Required<Pick<ImageCapability, 'generate'>> }
    : C extends 'images.edit'
      ? { images: Required<Pick<ImageCapability, 'edit'>> }
      : C extends 'speech'
        ? { speech: SpeechCapability }
        : C extends 'embeddings'
          ? { embeddings: EmbeddingCapability }
          : C extends 'transcriptions'
            ? { transcriptions: TranscriptionCapability }
            : { video: VideoCapability });

export interface MediaCall {
  model: ModelEntry;
  kind: ModelKind;
  endpoint: string;
  stream: boolean;
  capability: MediaCapability;
  /** What the capability is called in a 501, e.g. `Image generation`. */
  what: string;
}

/**
 * A media request under the same policies as text: the key's limits first, then the model's
 * deployments in turn until one accepts the call. Returns the provider's answer and the
 * request's ledger, which the route settles once its answer is complete; on failure the ledger
 * is settled here.
 */
export async function runMediaCall<C extends MediaCapability, T>(
  context: RouteContext,
  media: MediaCall & { capability: C },
  call: (provider: MediaProvider<C>, callContext: CallContext) => Promise<T>,
): Promise<{ result: T; ledger: RequestLedger }> {
  const { options, signal } = context;
  const order = routeOrderOf(context.request);
  const { health, retry } = options.policies;
  return withLedger(context, media, async (ledger) => {
    const route = routePlan(context, media.model, undefined, order);
    ledger.routed(route);
    const { result } = await runWithFallback({
      plan: route.plan,
      policy: retry,
      health,
      replaySafe: true,
      signal,
      firstByteTimeoutMs: media.model.firstByteTimeoutMs,
      onAttempt: (outcome) => ledger.attempted(outcome),
      attempt: (deployment, number, attemptSignal) => {
        ledger.trying(deployment, number);
        const model = modelOnDeployment(media.model, deployment);
        return call(mediaProvider(context, model, media.capability, media.what), callContext(context, model, attemptSignal));
      },
    });
    return { result, ledger };
  });
}

/** The model's provider, which must have the media call (else 501: a configuration gap, not a bad request). */
export function mediaProvider<C extends MediaCapability>(context: RouteContext, model: ModelEntry, capability: C, what: string): MediaProvider<C> {
  const provider = context.options.providers[model.provider]!;
  if (!hasMediaCall(provider, capability)) throw mediaUnavailable(model, what);
  return provider as MediaProvider<C>;
}

function hasMediaCall(provider: Provider, capability: MediaCapability): boolean {
  if (capability === 'images.generate') return typeof provider.images?.generate === 'function';
  if (capability === 'images.edit') return typeof provider.images?.edit === 'function';
  return provider[capability] !== undefined;
}

/** The id the upstream knows the model by. */
export function upstreamModel(model: ModelEntry): string {
  return model.upstreamModel ?? model.id;
}
