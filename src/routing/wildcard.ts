import type { DeploymentEntry, ModelEntry } from './model.js';
import { isModelId } from './model-id.js';

/**
 * Wildcard catalog entries: `{ "id": "openai/*", "provider": "oai" }` serves any `openai/<name>`
 * as upstream `<name>`, so a user does not list every model of a provider by hand. A `*` in the
 * entry's `upstreamModel` (or a deployment's) stands for the matched name: `"upstreamModel":
 * "accounts/fireworks/models/*"` serves `fw/llama-v3` as `accounts/fireworks/models/llama-v3`.
 */
export interface WildcardEntry {
  /** The id up to its trailing `*`. */
  prefix: string;
  entry: ModelEntry;
}

/** Whether a configured id is a pattern: only a trailing `*` is one (`openai/*`, `*`). */
export function isWildcardId(id: string): boolean {
  return id.endsWith('*');
}

/** The config problem of a pattern id, if any: one `*`, at the end. */
export function wildcardIdProblem(id: string): string | undefined {
  return id.indexOf('*') === id.length - 1 ? undefined : 'a wildcard id has one `*`, at its end (e.g. "openai/*")';
}

/**
 * The concrete entry a pattern serves for a client's model id: the longest matching prefix wins.
 * The id must be one a request may name (`isModelId`: bounded, printable, no `.`/`..` segment),
 * since the matched name goes into upstream paths and headers.
 */
export function matchWildcard(wildcards: readonly WildcardEntry[], id: string): ModelEntry | undefined {
  let best: WildcardEntry | undefined;
  for (const wildcard of wildcards) {
    if (id.length > wildcard.prefix.length && id.startsWith(wildcard.prefix) && (!best || wildcard.prefix.length > best.prefix.length)) best = wildcard;
  }
  if (!best || !isModelId(id)) return undefined;
  const name = id.slice(best.prefix.length);
  const { entry } = best;
  const fill = (template: string | undefined) => (template === undefined ? undefined : template.replaceAll('*', name));
  return {
    ...entry,
    id,
    upstreamModel: fill(entry.upstreamModel) ?? name,
    ...(entry.deployments
      ? {
          deployments: entry.deployments.map(
            (deployment): DeploymentEntry => ({
              ...deployment,
              upstreamModel: fill(deployment.upstreamModel),
              // A named deployment's health and stickiness are per concrete model, not shared by all.
              id: deployment.id === undefined ? undefined : deployment.id.includes('*') ? fill(deployment.id) : `${deployment.id}/${name}`,
            }),
          ),
        }
      : {}),
  };
}

/** Whether a key's scope names the model, by id or by a pattern of the same form (`openai/*`). */
export function scopeIncludes(scope: readonly string[], id: string): boolean {
  for (const allowed of scope) {
    if (allowed === id) return true;
    if (isWildcardId(allowed) && id.startsWith(allowed.slice(0, -1))) return true;
  }
  return false;
}
