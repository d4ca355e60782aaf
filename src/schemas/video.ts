import * as v from 'valibot';
import { arrayOfObjects, arrayOfStrings, bool, int, looseObj, model, str } from './common.js';
import { METADATA_EXPECTED, withinMetadataBounds } from './video-metadata.js';

const SECONDS = { min: 1, max: 3600 } as const;
const SECONDS_PHRASE = `an integer from ${SECONDS.min} to ${SECONDS.max}`;

/** A string that reads as a number (`"8"`, `" 2.5 "`, `"-1"`, `"1e3"`). */
function isNumericString(value: string): boolean {
  return value.trim() !== '' && Number.isFinite(Number(value));
}

/**
 * `seconds` is an integer 1–3600 or a string (OpenAI's video API sends `"8"`). A string that reads
 * as a number must be an integer in the same range; any other string (`"8s"`) is left to the
 * provider.
 */
const secondsSchema = v.union(
  [
    int(SECONDS),
    v.pipe(
      v.string(`${SECONDS_PHRASE}, or a string`),
      v.check((value) => {
        if (!isNumericString(value)) return true;
        const n = Number(value);
        return Number.isInteger(n) && n >= SECONDS.min && n <= SECONDS.max;
      }, `${SECONDS_PHRASE} (also when given as a numeric string)`),
    ),
  ],
  `${SECONDS_PHRASE}, or a string`,
);

/** `metadata` of a video request: known keys typed, any other key kept, within OpenAI's bounds (it is kept with the task). */
export const videoMetadataSchema = v.pipe(
  looseObj({
    resolution: v.optional(str()),
    ratio: v.optional(str()),
    content: v.optional(arrayOfObjects()),
    generate_audio: v.optional(bool()),
    watermark: v.optional(bool()),
    service_tier: v.optional(str()),
  }),
  v.check(withinMetadataBounds, METADATA_EXPECTED),
);

/** `POST /v1/video/generations` (spec 2.8). */
export const videoRequestSchema = looseObj(
  {
    model: model(),
    prompt: str(),
    duration: v.optional(int(SECONDS)),
    seconds: v.optional(secondsSchema),
    image: v.optional(str()),
    images: v.optional(arrayOfStrings()),
    size: v.optional(str()),
    metadata: v.optional(videoMetadataSchema),
  },
  'a JSON object',
);

export type VideoRequest = v.InferOutput<typeof videoRequestSchema>;
