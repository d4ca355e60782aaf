import type { Logger } from '../logger.js';
import type { IRUsage } from '../protocols/ir.js';
import { genaiPricesCatalog, type PriceCatalog } from './genai-prices-catalog.js';
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
  logger: Logger;
  /** Default: genai-prices. `false`: config prices only. */
  catalog?: PriceCatalog | false | undefined;
  now?: (() => Date) | undefined;
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

/** Models logged as unpriced are remembered up to this many (ids can come from wildcard models). */
const UNPRICED_MEMORY = 10_000;

/**
 * Dollars for each usage event: the model's configured price, else the catalog's, else 0 with
 * `unpriced` (logged once per model and upstream). Never throws: a price must not lock anyone out.
 */
export class Pricing {
  private readonly catalog: PriceCatalog | undefined;
  private readonly now: () => Date;
  private readonly loggedUnpriced = new Set<string>();

  constructor(private readonly options: PricingOptions) {
    this.catalog = options.catalog === false ? undefined : (options.catalog ?? genaiPricesCatalog);
    this.now = options.now ?? (() => new Date());
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
    const query = { providerType, upstreamModel: target.upstreamModel, model: target.model, at: this.now() };
    try {
      const table = this.catalog.lookup(query);
      return table ? { table, source: this.catalog.name } : undefined;
    } catch (error) {
      this.options.logger.error('price catalog failed; the model counts as unpriced', {
        catalog: this.catalog.name,
        model: target.model,
        upstreamModel: target.upstreamModel,
        message: error instanceof Error ? error.message : String(error),
      });
      return undefined;
    }
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
