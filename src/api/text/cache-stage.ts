import { CACHE_HEADER } from '../../cache/cacheability.js';
import { consultCache } from '../../cache/text-cache.js';
import { addHeaders } from '../../http/add-headers.js';
import type { PipelineStage } from './turn.js';

const MISS = { [CACHE_HEADER]: 'miss' };

/**
 * The response cache, innermost: an exact repeat is answered from it, a fresh answer kept
 * (`cache/text-cache.ts`). A turn whose answer a stage transforms (an output guardrail) is neither
 * served from the cache nor kept there: a cached answer was made under another key's transforms.
 */
export const responseCacheStage: PipelineStage = async (turn, next) => {
  if (!turn.context.options.responseCache) return next();
  if (turn.transforms.length > 0) return addHeaders(await next(), MISS);
  const cached = await consultCache(turn.context, turn.codec, turn.model, turn.body, turn.ledger);
  return cached.hit ?? cached.keep(await next());
};
