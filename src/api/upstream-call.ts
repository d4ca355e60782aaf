import type { RouteContext } from '../http/route.js';
import { stickyKeyOf } from '../policy/sticky-key.js';
import type { CallContext, Provider } from '../providers/provider.js';
import type { ModelEntry } from '../routing/model.js';
import { modelOnDeployment, orderDeployments, type Deployment } from '../routing/deployments.js';

/** What a provider is called with for one request on one model (already mapped to its deployment). */
export function callContext(context: RouteContext, model: ModelEntry): CallContext {
  return {
    signal: context.signal,
    requestId: context.requestId,
    key: context.key,
    model,
    serverContext: context.serverContext,
    idleTimeoutMs: context.options.limits.streamIdleTimeoutMs,
  };
}

/**
 * The deployment a generation would try first (cooling ones last, sticky by prompt cache key),
 * for the one-shot calls around generations (token counts, compaction) that do not fall back.
 */
export function firstDeployment(
  context: RouteContext,
  model: ModelEntry,
  body: Record<string, unknown>,
): { deployment: Deployment; provider: Provider; call: CallContext } {
  const { options, key } = context;
  const [deployment] = orderDeployments(
    options.catalog.deployments(model),
    (candidate) => options.policies.health.isCooling(candidate),
    stickyKeyOf(body, key),
  );
  return { deployment: deployment!, provider: options.providers[deployment!.provider]!, call: callContext(context, modelOnDeployment(model, deployment!)) };
}
