import type { RouteContext } from '../http/route.js';
import { encodeVector } from '../api/embedding-vectors.js';
import { admitRequest } from '../policy/admission.js';
import { RequestLedger } from '../policy/request-ledger.js';
import type { EmbeddingVector } from '../providers/media.js';
import type { ModelEntry } from '../routing/model.js';
import type { EmbeddingRequestBody } from '../schemas/embeddings.js';
import { cacheKeyOf } from './cache-key.js';
import { CACHE_HEADER, cacheWanted } from './cacheability.js';

/** Embeddings as the route answers them: vectors in input order and the input tokens. */
export interface EmbeddingAnswer {
  vectors: EmbeddingVector[];
  usage: { prompt_tokens: number; total_tokens: number };
}

/** What the embeddings route does with the cache for one request. */
export interface EmbeddingCacheTurn {
  /** The cached answer, with its ledger already settled as a cached request, when there was one. */
  hit: (EmbeddingAnswer & { ledger: RequestLedger; headers: Record<string, string> }) | undefined;
  /** `x-infergate-cache: miss` when the cache is on, for the upstream's answer. */
  headers: Record<string, string>;
  /** Keeps the upstream's answer (when the request may be cached). */
  keep(answer: EmbeddingAnswer): void;
}

/** The stored form: vectors as base64 float32 (OpenAI's own wire form, a quarter of the JSON numbers' size). */
interface StoredEmbeddings {
  v: 1;
  vectors: string[];
  usage: EmbeddingAnswer['usage'];
}

const NO_CACHE: EmbeddingCacheTurn = { hit: undefined, headers: {}, keep: () => {} };

/**
 * Embeddings are deterministic, so any request may be cached (no temperature rule), opted in as
 * text is: the model's or key's `cache`, or `x-infergate-cache: on`. The key is the OpenAI-shaped
 * body (the Gemini routes' too) without `user` and `encoding_format`: the answer is re-encoded in
 * the format each request asks. A hit passes admission (limits, budget) and settles its own
 * ledger, marked cached.
 */
export async function consultEmbeddingCache(
  context: RouteContext,
  model: ModelEntry,
  body: EmbeddingRequestBody,
  endpoint: string,
): Promise<EmbeddingCacheTurn> {
  const cache = context.options.responseCache;
  if (!cache) return NO_CACHE;
  const miss = { [CACHE_HEADER]: 'miss' };
  if (!cacheWanted(context.request, context.key, model)) return { ...NO_CACHE, headers: miss };
  const { user: _user, encoding_format: _format, ...request } = body as EmbeddingRequestBody & Record<string, unknown>;
  const storeKey = cacheKeyOf({ keyId: context.key.id, protocol: 'embeddings', model: model.id, body: request, headers: {} });
  if (storeKey === undefined) return { ...NO_CACHE, headers: miss };
  const stored = parseEmbeddings(await cache.get(storeKey, context.requestId));
  if (!stored) {
    return {
      hit: undefined,
      headers: miss,
      keep: (answer) => {
        const entry: StoredEmbeddings = {
          v: 1,
          vectors: answer.vectors.map((vector) => encodeVector(vector.embedding, 'base64') as string),
          usage: answer.usage,
        };
        cache.set(storeKey, JSON.stringify(entry), context.requestId);
      },
    };
  }
  const ledger = new RequestLedger(context, model, endpoint, 'embedding', false, await admitRequest(context, model));
  ledger.markCached();
  ledger.finish({ status: 'ok', usage: { input: stored.usage.prompt_tokens } });
  return {
    hit: {
      vectors: stored.vectors.map((embedding, index) => ({ index, embedding })),
      usage: stored.usage,
      ledger,
      headers: { ...ledger.headers, [CACHE_HEADER]: 'hit' },
    },
    headers: miss,
    keep: () => {},
  };
}

function parseEmbeddings(text: string | undefined): StoredEmbeddings | undefined {
  if (text === undefined) return undefined;
  try {
    const entry = JSON.parse(text) as Partial<StoredEmbeddings> | null;
    return entry?.v === 1 && Array.isArray(entry.vectors) && typeof entry.usage?.prompt_tokens === 'number' ? (entry as StoredEmbeddings) : undefined;
  } catch {
    return undefined;
  }
}
