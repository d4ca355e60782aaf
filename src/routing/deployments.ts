import { createHash } from 'node:crypto';
import type { DeploymentEntry, ModelEntry } from './model.js';

export interface Deployment {
  id: string;
  provider: string;
  upstreamModel: string;
  weight: number;
}

/** A model's deployments; a model without `deployments` has one, its own provider and upstream model. */
export function deploymentsOf(model: ModelEntry): Deployment[] {
  const entries: readonly DeploymentEntry[] = model.deployments ?? [{ provider: model.provider }];
  return entries.map((entry) => {
    const upstreamModel = entry.upstreamModel ?? model.upstreamModel ?? model.id;
    return { id: entry.id ?? `${entry.provider}/${upstreamModel}`, provider: entry.provider, upstreamModel, weight: entry.weight ?? 1 };
  });
}

/** The catalog entry as one deployment sees it: what providers and stores get as `call.model`. */
export function modelOnDeployment(model: ModelEntry, deployment: Deployment): ModelEntry {
  if (deployment.provider === model.provider && deployment.upstreamModel === (model.upstreamModel ?? model.id)) return model;
  return { ...model, provider: deployment.provider, upstreamModel: deployment.upstreamModel };
}

/** Which order a request asks for (`x-infergate-route-order`); `latency` by default. */
export type RouteOrder = 'latency' | 'price' | 'configured';
export const ROUTE_ORDERS: readonly RouteOrder[] = ['latency', 'price', 'configured'];

/**
 * Why the first deployment of a plan was chosen: the only one; `sticky` (rendezvous by prompt
 * cache key); `p2c` (power of two choices by latency and load); `price`; `configured`; `probe`
 * (a half-open breaker's trial request); `last_resort` (every deployment's breaker is open).
 */
export type RouteReason = 'only' | 'sticky' | 'p2c' | 'price' | 'configured' | 'probe' | 'last_resort';

/** What routing reads of deployments' health (`DeploymentHealth`). */
export interface RoutingHealth {
  /** Not open, and not half-open with its probe already out. */
  isAvailable(deployment: Deployment, now: number): boolean;
  /** Half-open: the next request to it is a probe. */
  state(deployment: Deployment, now: number): string;
  /** Lower is better (latency × load). */
  score(deployment: Deployment, now: number): number;
}

export interface RouteRequest {
  /** Pins the request to one deployment by rendezvous hashing (a prompt cache key). */
  stickyKey?: string | undefined;
  order?: RouteOrder | undefined;
  /** A deployment's price (any unit, the same for all; undefined when unknown), for `order: price`. */
  priceOf?: ((deployment: Deployment) => number | undefined) | undefined;
  random?: (() => number) | undefined;
  now?: number | undefined;
}

export interface RoutePlan {
  /** Deployments in the order to try them: the available ones, then those whose breaker is open. */
  plan: Deployment[];
  reason: RouteReason;
  order: RouteOrder;
}

/**
 * The order in which to try a model's deployments. Those whose breaker is open (or half-open
 * with its probe out) go last, by score: still a last resort rather than an error. Among the
 * available ones, by the request's order:
 * - `latency` (default) with a sticky key: weighted rendezvous hashing, so every instance
 *   computes the same order from the key alone and an upstream prompt cache keeps hitting
 *   (latency does not override stickiness; an open breaker does);
 * - `latency` without one: power of two choices, two candidates drawn by weight and the lower
 *   score kept (ties to the first drawn, so equal deployments share traffic by weight), then
 *   the rest by score;
 * - `price`: cheapest first (unknown prices last), ties in configured order;
 * - `configured`: as listed.
 */
export function planRoute(deployments: readonly Deployment[], health: RoutingHealth, request: RouteRequest = {}): RoutePlan {
  const order = request.order ?? 'latency';
  if (deployments.length === 1) return { plan: [...deployments], reason: 'only', order };
  const now = request.now ?? Date.now();
  // Each score once per plan: reading one decays the latency estimate.
  const scores = new Map<Deployment, number>();
  const scoreOf = (deployment: Deployment): number => {
    let score = scores.get(deployment);
    if (score === undefined) scores.set(deployment, (score = health.score(deployment, now)));
    return score;
  };
  const byScore = (list: Deployment[]) => list.sort((a, b) => scoreOf(a) - scoreOf(b));
  const available: Deployment[] = [];
  const unavailable: Deployment[] = [];
  for (const deployment of deployments) (health.isAvailable(deployment, now) ? available : unavailable).push(deployment);
  const lastResort = byScore(unavailable);
  if (available.length === 0) return { plan: lastResort, reason: 'last_resort', order };

  let ordered: Deployment[];
  let reason: RouteReason;
  if (order === 'price') {
    const priced = available.map((deployment, index) => ({ deployment, index, price: request.priceOf?.(deployment) ?? Number.POSITIVE_INFINITY }));
    ordered = priced.sort((a, b) => a.price - b.price || a.index - b.index).map((entry) => entry.deployment);
    reason = 'price';
  } else if (order === 'configured') {
    ordered = available;
    reason = 'configured';
  } else if (request.stickyKey !== undefined) {
    ordered = rendezvousOrder(available, request.stickyKey);
    reason = 'sticky';
  } else {
    const first = powerOfTwoChoices(available, scoreOf, request.random ?? Math.random);
    ordered = [first, ...byScore(available.filter((deployment) => deployment !== first))];
    reason = 'p2c';
  }
  if (health.state(ordered[0]!, now) === 'half_open') reason = 'probe';
  return { plan: [...ordered, ...lastResort], reason, order };
}

/** Two distinct candidates drawn by weight; the one with the lower score, the first drawn on a tie. */
function powerOfTwoChoices(deployments: readonly Deployment[], score: (deployment: Deployment) => number, random: () => number): Deployment {
  const first = weightedPick(deployments, random);
  if (deployments.length === 1) return first;
  const second = weightedPick(
    deployments.filter((deployment) => deployment !== first),
    random,
  );
  return score(second) < score(first) ? second : first;
}

function weightedPick(deployments: readonly Deployment[], random: () => number): Deployment {
  let total = 0;
  for (const deployment of deployments) total += deployment.weight;
  let point = random() * total;
  for (const deployment of deployments) {
    point -= deployment.weight;
    if (point < 0) return deployment;
  }
  return deployments[deployments.length - 1]!;
}

/** Highest score first, score = -weight / ln(hash) (weighted rendezvous hashing). */
export function rendezvousOrder(deployments: readonly Deployment[], stickyKey: string): Deployment[] {
  const scored = deployments.map((deployment) => ({ deployment, score: -deployment.weight / Math.log(unitHash(stickyKey, deployment.id)) }));
  scored.sort((a, b) => b.score - a.score);
  return scored.map((entry) => entry.deployment);
}

/** A hash of the pair mapped into (0, 1), never 0 or 1 so its logarithm is finite and negative. */
function unitHash(stickyKey: string, deploymentId: string): number {
  const digest = createHash('sha256').update(stickyKey).update('\0').update(deploymentId).digest();
  return (digest.readUIntBE(0, 6) + 1) / (2 ** 48 + 2);
}
