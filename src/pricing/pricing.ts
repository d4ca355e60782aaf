import { setBounded } from '../bounded-map.js';
import type { Logger } from '../logger.js';
import type { IRUsage } from '../protocols/ir.js';
import { genaiPricesCatalog, type PriceCatalog, type PriceQuery } from './genai-prices-catalog.js';
import type { ModelPrice, PriceTable } from './model-price.js';
import { pricesUsage, usageCost, type UsageUnits } from './usage-cost.js';

/** `config` (the model's `price`), `local` (the offline provider: free), the catalog's name (`genai-prices`), or `unpriced`. */
export type PriceSource = 'config' | 'unpriced' | (string & {});

export interface EventCost {
  /** Dollars; 0 when unpriced. */
  costUsd: number;
  priceSource: PriceSource;
}

/** What pricing reads of a usage event: which model answered, and what it used. */
export interface PricedUsage {
  /** Public model id. */
  model: string;
  /** Provider name (a key of the gateway's `providers`). */
  provider: string;
  upstreamModel: string;
  usage: IRUsage;
  units?: UsageUnits | undefined;
}

export interface PricingOptions {
  /** A public model's configured `price`, if any. */
  configuredPrice: (model: string) => ModelPrice | undefined;
  /** A provider's `type`, by provider name. */
  providerType: (provider: string) => string | undefined;
  /** The ids a catalog may know an upstream model by on a provider (`Provider.catalogIds`). Default: the upstream id alone. */
  catalogIds?: ((provider: string, upstreamModel: string) => readonly string[]) | undefined;
  logger: Logger;
  /** Default: genai-prices. `false`: config prices only. */
  catalog?: PriceCatalog | false | undefined;
  /** The clock, in ms since epoch (prices that changed on a date are read at it). Default `Date.now`. */
  now?: (() => number) | undefined;
}

/** The `local` provider's models run in the gateway's own process: free, whatever they make. */
const LOCAL_PRICE: PriceTable = {
  input: 0,
  output: 0,
  cacheRead: 0,
  cacheWrite: 0,
  reasoning: 0,
  image: 0,
  videoSecond: 0,
  speechCharacter: 0,
  audioSecond: 0,
};

/**
 * Catalog answers are kept this long per model and upstream: a lookup costs ~10 µs (20 µs for a
 * model the catalog lacks), paid on every usage event and budget check otherwise; prices change
 * by the day, not by the minute.
 */
const CATALOG_MEMO_MS = 10 * 60_000;
const CATALOG_MEMO_SIZE = 10_000;

/** Context windows remembered, one per listed model and upstream (they do not change with time). */
const WINDOW_MEMO_SIZE = 10_000;

/** Models logged as unpriced are remembered up to this many (ids can come from wildcard models). */
const UNPRICED_MEMORY = 10_000;

/**
 * Dollars for each usage event: the model's configured price, else the catalog's, else 0 with
 * `unpriced` (logged once per model and upstream). Never throws: a price must not lock anyone out.
 */
export class Pricing {
  private readonly catalog: PriceCatalog | undefined;
  private readonly now: () => number;
  private readonly loggedUnpriced = new Set<string>();
  private readonly catalogMemo = new Map<string, { price: { table: PriceTable; source: PriceSource } | undefined; until: number }>();
  private readonly windowMemo = new Map<string, number | null>();

  constructor(private readonly options: PricingOptions) {
    this.catalog = options.catalog === false ? undefined : (options.catalog ?? genaiPricesCatalog);
    this.now = options.now ?? Date.now;
  }

  /**
   * The price a model has on one upstream, and where it came from; undefined when none is known.
   * Never throws (the budget check asks it before the upstream call): a failing catalog is logged
   * and counts as no price.
   */
  lookup(target: Pick<PricedUsage, 'model' | 'provider' | 'upstreamModel'>): { table: PriceTable; source: PriceSource } | undefined {
    const configured = this.options.configuredPrice(target.model);
    if (configured) return { table: configured, source: 'config' };
    const providerType = this.options.providerType(target.provider);
    if (providerType === 'local') return { table: LOCAL_PRICE, source: 'local' };
    if (!this.catalog) return undefined;
    const memoKey = `${target.model}\0${target.provider}\0${target.upstreamModel}`;
    const now = this.now();
    const memo = this.catalogMemo.get(memoKey);
    if (memo && memo.until > now) return memo.price;
    // A Date only for the catalog: a memoized answer allocates none.
    const { price, failed } = this.catalogLookup(target, providerType, new Date(now));
    // A failure is not remembered: the next request asks again.
    if (!failed) {
      setBounded(this.catalogMemo, memoKey, { price, until: now + CATALOG_MEMO_MS }, CATALOG_MEMO_SIZE);
    }
    return price;
  }

  private catalogLookup(
    target: Pick<PricedUsage, 'model' | 'provider' | 'upstreamModel'>,
    providerType: string | undefined,
    at: Date,
  ): { price: { table: PriceTable; source: PriceSource } | undefined; failed: boolean } {
    const catalog = this.catalog!;
    try {
      // A custom provider's `catalogIds` may throw too: counted as the catalog's failure.
      const table = catalog.lookup(this.catalogQuery(target, providerType, at));
      return { price: table ? { table, source: catalog.name } : undefined, failed: false };
    } catch (error) {
      this.options.logger.error('price catalog failed; the model counts as unpriced', {
        catalog: catalog.name,
        model: target.model,
        upstreamModel: target.upstreamModel,
        message: error instanceof Error ? error.message : String(error),
      });
      return { price: undefined, failed: true };
    }
  }

  /**
   * The context window the catalog gives the model on one upstream, in tokens, or undefined; the
   * local provider's models have none. Never throws: a failing catalog is logged and counts as
   * not knowing.
   */
  contextWindow(target: Pick<PricedUsage, 'model' | 'provider' | 'upstreamModel'>): number | undefined {
    const providerType = this.options.providerType(target.provider);
    if (!this.catalog?.contextWindow || providerType === 'local') return undefined;
    const memoKey = `${target.model}\0${target.provider}\0${target.upstreamModel}`;
    const known = this.windowMemo.get(memoKey);
    if (known !== undefined) return known ?? undefined;
    try {
      const window = this.catalog.contextWindow(this.catalogQuery(target, providerType, new Date(this.now())));
      const value = typeof window === 'number' && Number.isInteger(window) && window > 0 ? window : undefined;
      setBounded(this.windowMemo, memoKey, value ?? null, WINDOW_MEMO_SIZE);
      return value;
    } catch (error) {
      this.options.logger.error('price catalog failed; the model’s context window is not known', {
        catalog: this.catalog.name,
        model: target.model,
        message: error instanceof Error ? error.message : String(error),
      });
      return undefined;
    }
  }

  private catalogQuery(target: Pick<PricedUsage, 'model' | 'provider' | 'upstreamModel'>, providerType: string | undefined, at: Date): PriceQuery {
    const upstreamIds = this.options.catalogIds?.(target.provider, target.upstreamModel) ?? [target.upstreamModel];
    return { providerType, upstreamModel: target.upstreamModel, upstreamIds, model: target.model, at };
  }

  costOf(event: PricedUsage): EventCost {
    const price = this.lookup(event);
    if (price && pricesUsage(price.table, event.usage, event.units)) {
      return { costUsd: usageCost(price.table, event.usage, event.units), priceSource: price.source };
    }
    this.reportUnpriced(event);
    return { costUsd: 0, priceSource: 'unpriced' };
  }

  private reportUnpriced(event: PricedUsage): void {
    const id = `${event.model}\0${event.provider}\0${event.upstreamModel}`;
    if (this.loggedUnpriced.has(id) || this.loggedUnpriced.size >= UNPRICED_MEMORY) return;
    this.loggedUnpriced.add(id);
    this.options.logger.warn('model has no known price; its usage costs 0 (set the model\'s "price" to charge it)', {
      model: event.model,
      provider: event.provider,
      upstreamModel: event.upstreamModel,
    });
  }
}
