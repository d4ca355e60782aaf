import { createHash } from 'node:crypto';
import type { KeyRecord } from '../auth/key-store.js';

/**
 * Whose prompt cache a client's `prompt_cache_key` names upstream (`policies.promptCacheKey`):
 * - `key` (default): the caller's API key's own. Every tenant of an upstream account shares its
 *   prompt cache, and `cached_tokens` and a faster first token tell a caller whether a prefix is
 *   in it: a tenant that sends another's `prompt_cache_key` is routed to the machines holding
 *   that tenant's prefixes and can test guesses of them. Scoped per key, the same value from two
 *   keys is two different keys upstream, while each key keeps its own hits.
 * - `group`: the key's group's (`KeyRecord.group`): keys of one team or application share hits.
 * - `shared`: sent as the client wrote it (one application behind many keys, no tenants).
 */
export type PromptCacheKeyScope = 'key' | 'group' | 'shared';

export const PROMPT_CACHE_KEY_SCOPES: readonly PromptCacheKeyScope[] = ['key', 'group', 'shared'];

/**
 * The body with its `prompt_cache_key` (OpenAI's Chat and Responses) replaced by a hash of the
 * scope and the client's value: 43 characters, within OpenAI's 64, naming neither the key nor the
 * group. The same body when there is nothing to change.
 */
export function scopedPromptCacheKey(body: Record<string, unknown>, key: KeyRecord, scope: PromptCacheKeyScope): Record<string, unknown> {
  const value = body.prompt_cache_key;
  if (scope === 'shared' || typeof value !== 'string' || value === '') return body;
  const owner = scope === 'key' ? `key:${key.id}` : `group:${key.group ?? 'default'}`;
  const scoped = createHash('sha256')
    .update(JSON.stringify([owner, value]))
    .digest('base64url');
  return { ...body, prompt_cache_key: scoped };
}
