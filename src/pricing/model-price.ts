/**
 * Prices in dollars. Token prices are per million tokens, as every vendor's price page quotes
 * them; media prices are per unit (one image, one second of video, one character of speech, one
 * second of audio transcribed),
 * because that is how each of those is counted in `UsageEvent.units`.
 */

/** A model's `price` in the config: set, it is the model's whole price (the catalog is not read). */
export interface ModelPrice {
  /** Per million input tokens (the uncached part of the prompt). */
  input?: number | undefined;
  /** Per million output tokens (reasoning included unless `reasoning` is set). */
  output?: number | undefined;
  /** Per million cached input tokens read. Default: `input`. */
  cacheRead?: number | undefined;
  /** Per million input tokens written to the cache. Default: `input`. */
  cacheWrite?: number | undefined;
  /** Per million reasoning tokens, when the vendor bills them apart from output. Default: `output`. */
  reasoning?: number | undefined;
  /** Per image generated or edited. */
  image?: number | undefined;
  /** Per second of video asked for. */
  videoSecond?: number | undefined;
  /** Per character of text spoken (speech). */
  speechCharacter?: number | undefined;
  /** Per second of audio transcribed. */
  audioSecond?: number | undefined;
}

/** A token price that rises past a prompt size: `price` applies to the whole request once its input tokens exceed `start`. */
export interface TieredPrice {
  base: number;
  tiers: readonly { start: number; price: number }[];
}

export type TokenPrice = number | TieredPrice;

/** What pricing works from, whichever source it came from. */
export interface PriceTable {
  input?: TokenPrice | undefined;
  output?: TokenPrice | undefined;
  cacheRead?: TokenPrice | undefined;
  cacheWrite?: TokenPrice | undefined;
  reasoning?: TokenPrice | undefined;
  image?: number | undefined;
  videoSecond?: number | undefined;
  speechCharacter?: number | undefined;
  audioSecond?: number | undefined;
}

export const MODEL_PRICE_FIELDS = [
  'input',
  'output',
  'cacheRead',
  'cacheWrite',
  'reasoning',
  'image',
  'videoSecond',
  'speechCharacter',
  'audioSecond',
] as const;

/** Validates a model's `price` (options or config file); throws a `TypeError` naming the bad field. */
export function checkModelPrice(price: unknown, where: string): asserts price is ModelPrice {
  if (typeof price !== 'object' || price === null || Array.isArray(price)) throw new TypeError(`${where} must be an object`);
  for (const [field, value] of Object.entries(price)) {
    if (!(MODEL_PRICE_FIELDS as readonly string[]).includes(field)) {
      throw new TypeError(`${where}.${field}: unknown field (allowed: ${MODEL_PRICE_FIELDS.join(', ')})`);
    }
    if (value !== undefined && !(typeof value === 'number' && Number.isFinite(value) && value >= 0)) {
      throw new TypeError(`${where}.${field} must be a number >= 0 (dollars)`);
    }
  }
}

/** Validates every model's `price` of the options; the message names the model's index and field. */
export function checkModelPrices(models: readonly { price?: unknown }[]): void {
  models.forEach((model, index) => {
    if (model.price !== undefined) checkModelPrice(model.price, `models[${index}].price`);
  });
}
