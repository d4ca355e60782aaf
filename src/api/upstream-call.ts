import type { RouteContext } from '../http/route.js';
import { stickyKeyOf } from '../policy/sticky-key.js';
import type { CallContext, Provider } from '../providers/provider.js';
import type { ModelEntry } from '../routing/model.js';
import { modelOnDeployment, planRoute, type Deployment, type RouteOrder, type RoutePlan } from '../routing/deployments.js';
import { deploymentPrice } from '../routing/deployment-price.js';
import { routeOrderOf } from '../routing/route-headers.js';

/**
 * What a provider is called with for one request on one model (already mapped to its
 * deployment). `signal` is the client's unless an attempt has its own (a first-byte timeout).
 */
export function callContext(context: RouteContext, model: ModelEntry, signal: AbortSignal = context.signal): CallContext {
  return {
    signal,
    requestId: context.requestId,
    key: context.key,
    model,
    serverContext: context.serverContext,
    idleTimeoutMs: context.options.limits.streamIdleTimeoutMs,
    upstreamWait: context.timing,
  };
}

/**
 * The order in which a request tries the model's deployments: by latency and load, stickiness,
 * price or as configured, open breakers last (docs/policies.md, "Choosing a deployment").
 */
export function routePlan(context: RouteContext, model: ModelEntry, stickyKey: string | undefined, order: RouteOrder): RoutePlan {
  const { options } = context;
  return planRoute(options.catalog.deployments(model), options.policies.health, {
    stickyKey,
    order,
    priceOf: (deployment) => deploymentPrice(options.pricing, model, deployment),
  });
}

/**
 * The deployment a generation would try first (open breakers last, sticky by prompt cache key),
 * for the one-shot calls around generations (token counts, compaction) that do not fall back.
 */
export function firstDeployment(
  context: RouteContext,
  model: ModelEntry,
  body: Record<string, unknown>,
): { deployment: Deployment; provider: Provider; call: CallContext; route: RoutePlan } {
  const { options, key, request } = context;
  const route = routePlan(context, model, stickyKeyOf(body, key), routeOrderOf(request));
  const deployment = route.plan[0]!;
  return { deployment, provider: options.providers[deployment.provider]!, call: callContext(context, modelOnDeployment(model, deployment)), route };
}
