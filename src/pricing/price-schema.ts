import * as v from 'valibot';
import { nonNegativeNumber, strictObject } from '../config-fields.js';

/** A model's `price` in the config file (see `ModelPrice`): dollars, each field optional. */
export const ModelPriceSchema = strictObject({
  input: v.optional(nonNegativeNumber),
  output: v.optional(nonNegativeNumber),
  cacheRead: v.optional(nonNegativeNumber),
  cacheWrite: v.optional(nonNegativeNumber),
  reasoning: v.optional(nonNegativeNumber),
  image: v.optional(nonNegativeNumber),
  videoSecond: v.optional(nonNegativeNumber),
  speechCharacter: v.optional(nonNegativeNumber),
  audioSecond: v.optional(nonNegativeNumber),
});
