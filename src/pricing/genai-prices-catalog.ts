import { calcPrice } from '@pydantic/genai-prices';
import type { PriceTable, TokenPrice } from './model-price.js';

/** Where prices come from when a model's config sets none. */
export interface PriceCatalog {
  /** Reported as the usage event's `priceSource`. */
  readonly name: string;
  /** The price of an upstream model at a time, or undefined when the catalog does not know it. */
  lookup(query: PriceQuery): PriceTable | undefined;
  /** The model's context window in tokens, when the catalog knows it (Anthropic's listing shows it as `max_input_tokens`). */
  contextWindow?(query: PriceQuery): number | undefined;
}

export interface PriceQuery {
  /** The provider's `type` (`openai`, `anthropic`, `gemini`…), undefined for a provider the gateway does not know. */
  providerType: string | undefined;
  upstreamModel: string;
  /**
   * The ids the catalog may know the upstream model by, most specific first (the provider's
   * `catalogIds`: a Bedrock ARN's model id, a Vertex id without its publisher and `@version`);
   * `[upstreamModel]` when the provider has none.
   */
  upstreamIds: readonly string[];
  /** The public model id, tried when the upstream model is not in the catalog. */
  model: string;
  at: Date;
}

/**
 * genai-prices' provider id for each provider type whose upstream is a vendor it prices. Vertex
 * serves Google's models and (as Google's fallback in the catalog) Anthropic's. A type not listed
 * here is matched by model name alone; `local` answers in-process and is never in a catalog.
 */
const catalogProviders: Record<string, string | null> = {
  openai: 'openai',
  anthropic: 'anthropic',
  gemini: 'google',
  vertex: 'google',
  bedrock: 'aws',
  azure: 'azure',
  local: null,
};

/**
 * Pydantic's genai-prices (MIT): the data ships inside the package, so lookups need no network
 * (its `updatePrices` auto-update is never turned on here), and it knows tiered and cache prices
 * and prices that changed on a date.
 */
export const genaiPricesCatalog: PriceCatalog = {
  name: 'genai-prices',
  lookup(query) {
    const found = catalogEntry(query);
    return found ? toPriceTable(found.model_price) : undefined;
  },
  contextWindow(query) {
    return catalogEntry(query)?.model.context_window;
  },
};

/** The catalog's entry for the upstream model: its ids most specific first, then the public id, each dated then undated. */
function catalogEntry({ providerType, upstreamIds, model, at }: PriceQuery): CatalogEntry | undefined {
  const providerId = providerType === undefined ? undefined : catalogProviders[providerType];
  if (providerId === null) return undefined;
  for (const id of new Set([...upstreamIds, model])) {
    for (const candidate of id === undated(id) ? [id] : [id, undated(id)]) {
      const found = calcPrice({}, candidate, { ...(providerId ? { providerId } : {}), timestamp: at });
      if (found) return found;
    }
  }
  return undefined;
}

/**
 * An id without a dated snapshot suffix (`gpt-4o-2099-01-01`, `claude-…-20990101`), tried after
 * the id itself: a snapshot newer than the catalog is priced as its model rather than not at all
 * (the catalog matches the snapshots it knows, which may be priced apart, by their own id first).
 */
function undated(id: string): string {
  return id.replace(/-(?:\d{4}-\d{2}-\d{2}|\d{8})$/, '');
}

type CatalogEntry = NonNullable<ReturnType<typeof calcPrice>>;
type CatalogPrice = CatalogEntry['model_price'];

function toPriceTable(price: CatalogPrice): PriceTable {
  const table: PriceTable = {};
  const set = (field: 'input' | 'output' | 'cacheRead' | 'cacheWrite' | 'reasoning', key: string) => {
    const value = tokenPrice(price[key]);
    if (value !== undefined) table[field] = value;
  };
  set('input', 'input_mtok');
  set('output', 'output_mtok');
  set('cacheRead', 'cache_read_mtok');
  set('cacheWrite', 'cache_write_mtok');
  set('reasoning', 'output_reasoning_mtok');
  // Speech priced by characters (per million in the catalog, per character here).
  const characters = price.input_mchars;
  if (typeof characters === 'number') table.speechCharacter = characters / 1_000_000;
  return table;
}

function tokenPrice(value: CatalogPrice[string]): TokenPrice | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'number') return value;
  return { base: value.base, tiers: value.tiers.map(({ start, price }) => ({ start, price })) };
}
