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

/**
 * The order in which to try a model's deployments. Deployments cooling down go last (still a
 * last resort rather than an error). Among the healthy ones:
 * - with a sticky key, weighted rendezvous hashing: every instance computes the same order from
 *   the key alone, and removing a deployment moves only the keys it owned, so upstream prompt
 *   caches keep hitting;
 * - without one, a weighted random first choice, then the rest by weight.
 */
export function orderDeployments(
  deployments: readonly Deployment[],
  isCooling: (deployment: Deployment) => boolean,
  stickyKey: string | undefined,
  random: () => number = Math.random,
): Deployment[] {
  if (deployments.length === 1) return [...deployments];
  const healthy = deployments.filter((deployment) => !isCooling(deployment));
  const cooling = deployments.filter((deployment) => isCooling(deployment));
  const ordered = stickyKey === undefined ? weightedShuffle(healthy, random) : rendezvousOrder(healthy, stickyKey);
  return [...ordered, ...cooling];
}

/** Highest score first, score = -weight / ln(hash) (weighted rendezvous hashing). */
function rendezvousOrder(deployments: readonly Deployment[], stickyKey: string): Deployment[] {
  const scored = deployments.map((deployment) => ({ deployment, score: -deployment.weight / Math.log(unitHash(stickyKey, deployment.id)) }));
  scored.sort((a, b) => b.score - a.score);
  return scored.map((entry) => entry.deployment);
}

/** A hash of the pair mapped into (0, 1), never 0 or 1 so its logarithm is finite and negative. */
function unitHash(stickyKey: string, deploymentId: string): number {
  const digest = createHash('sha256').update(stickyKey).update('\0').update(deploymentId).digest();
  return (digest.readUIntBE(0, 6) + 1) / (2 ** 48 + 2);
}

/** Weighted random order without replacement (Efraimidis–Spirakis: key = u^(1/weight)). */
function weightedShuffle(deployments: readonly Deployment[], random: () => number): Deployment[] {
  const keyed = deployments.map((deployment) => ({ deployment, key: random() ** (1 / deployment.weight) }));
  keyed.sort((a, b) => b.key - a.key);
  return keyed.map((entry) => entry.deployment);
}
