import { setBounded } from '../bounded-map.js';
import type { Deployment } from '../routing/deployments.js';

/**
 * Deployments remembered at most, in each map: a wildcard entry's deployment ids hold the
 * client's model name, so they must not grow without end.
 */
const DEPLOYMENTS_MAX = 10_000;

/**
 * Which deployments are cooling down, in this process. A deployment that fails several times in
 * a row, or answers 429 with a `retry-after`, is skipped (tried last) until its cooldown ends.
 * Kept per process on purpose: health is what this instance sees of the upstream, and a wrong
 * guess costs one extra attempt, never a failed request.
 */
export class DeploymentHealth {
  private readonly failures = new Map<string, number>();
  private readonly coolingUntil = new Map<string, number>();

  constructor(
    private readonly failuresBeforeCooldown: number,
    private readonly cooldownMs: number,
  ) {}

  isCooling(deployment: Deployment, now = Date.now()): boolean {
    const until = this.coolingUntil.get(deployment.id);
    if (until === undefined) return false;
    if (until > now) return true;
    this.coolingUntil.delete(deployment.id);
    return false;
  }

  /** Forgets every failure and cooldown (e.g. after the upstreams were fixed). */
  clear(): void {
    this.failures.clear();
    this.coolingUntil.clear();
  }

  succeeded(deployment: Deployment): void {
    if (this.failures.size > 0) this.failures.delete(deployment.id);
  }

  /** Counts a retryable failure; `retryAfterMs` (from a 429) cools the deployment down at once for that long. */
  failed(deployment: Deployment, retryAfterMs: number | undefined, now = Date.now()): void {
    const count = (this.failures.get(deployment.id) ?? 0) + 1;
    setBounded(this.failures, deployment.id, count, DEPLOYMENTS_MAX);
    const cooldown = retryAfterMs !== undefined ? Math.min(retryAfterMs, this.cooldownMs) : count >= this.failuresBeforeCooldown ? this.cooldownMs : 0;
    if (cooldown > 0) {
      setBounded(this.coolingUntil, deployment.id, Math.max(this.coolingUntil.get(deployment.id) ?? 0, now + cooldown), DEPLOYMENTS_MAX);
      this.failures.delete(deployment.id);
    }
  }
}
