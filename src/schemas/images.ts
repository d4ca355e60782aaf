import * as v from 'valibot';
import { anyValue, bool, int, looseObj, model, str, stringOrStrings } from './common.js';

/** Spec 8: `n` of image requests. Family rules (gpt-image and Seedream need 1) are the API's. */
export const IMAGE_N = { min: 1, max: 128 } as const;

/** `POST /v1/images/generations` (spec 2.5 and 8). */
export const imageRequestSchema = looseObj(
  {
    model: model(),
    prompt: str(),
    /** Reference images (URL or data URL): one string, or 1 to 10. */
    image: v.optional(stringOrStrings(1, 10)),
    n: v.optional(int(IMAGE_N)),
    size: v.optional(str()),
    quality: v.optional(str()),
    response_format: v.optional(str()),
    output_format: v.optional(str()),
    output_compression: v.optional(int()),
    stream: v.optional(bool()),
    partial_images: v.optional(int()),
    background: v.optional(anyValue()),
    moderation: v.optional(anyValue()),
    watermark: v.optional(bool()),
  },
  'a JSON object',
);

export type ImageRequest = v.InferOutput<typeof imageRequestSchema>;
