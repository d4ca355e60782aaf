import { addHeaders } from '../http/add-headers.js';
import type { RouteContext } from '../http/route.js';
import type { ClientCodec } from '../protocols/codec.js';
import type { RequestLedger } from '../policy/request-ledger.js';
import type { ModelEntry } from '../routing/model.js';
import { cacheKeyOf } from './cache-key.js';
import { parseAnswer, serializeAnswer } from './cached-answer.js';
import { CACHE_HEADER, cacheWanted, uncacheableReason } from './cacheability.js';
import { captureAnswer } from './capture.js';
import { replayAnswer } from './replay.js';

/** What the text pipeline does with the cache for one request: answer from it, or keep what the upstream answers. */
export interface CacheTurn {
  /** The cached answer, when there was one. */
  hit: Response | undefined;
  /** The upstream's answer, marked `miss` and kept in the cache once complete (when the request may be). */
  keep(response: Response): Response;
}

const NO_CACHE: CacheTurn = { hit: undefined, keep: (response) => response };
const MISS = { [CACHE_HEADER]: 'miss' };
const HIT = { [CACHE_HEADER]: 'hit' };

/**
 * Consults the response cache for a text request, after admission (a hit passes the key's
 * scope and limits like any request). Without `responseCache` nothing happens and no header is
 * sent; with it every answer says `x-infergate-cache: hit` or `miss`.
 */
export async function consultCache(
  context: RouteContext,
  codec: ClientCodec,
  model: ModelEntry,
  body: Record<string, unknown>,
  ledger: RequestLedger,
): Promise<CacheTurn> {
  const cache = context.options.responseCache;
  if (!cache) return NO_CACHE;
  const { request, key, requestId } = context;
  const markMiss: CacheTurn = { hit: undefined, keep: (response) => addHeaders(response, MISS) };
  if (!cacheWanted(request, key, model)) return markMiss;
  if (uncacheableReason(codec.protocol, body, model, cache.settings, context.options.responseStore !== undefined)) return markMiss;

  const beta = codec.protocol === 'messages' ? request.headers.get('anthropic-beta') : null;
  const storeKey = cacheKeyOf({ keyId: key.id, protocol: codec.protocol, model: model.id, body, headers: beta ? { 'anthropic-beta': beta } : {} });
  if (storeKey === undefined) return markMiss;
  const entry = await cache.get(storeKey, requestId);
  const stored = entry === undefined ? undefined : parseAnswer(entry);
  if (stored) return { hit: await replayAnswer(context, codec, model, body, stored.response, ledger, { ...stored.notes, ...HIT }), keep: markMiss.keep };
  return {
    hit: undefined,
    keep: (response) =>
      captureAnswer(addHeaders(response, MISS), codec.protocol, ledger, (answer) => cache.set(storeKey, serializeAnswer(answer, response.headers), requestId)),
  };
}
