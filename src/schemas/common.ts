import * as v from 'valibot';
import { isRecord } from '../json.js';
import { isModelId, MODEL_ID_EXPECTED } from '../routing/model-id.js';

/**
 * Building blocks shared by the request schemas.
 *
 * Convention: the message of every schema and action is the *expected* phrase only ("an integer
 * from 1 to 128"); `validateBody` wraps it into the sentence the client reads ("Invalid value for
 * 'n': expected an integer from 1 to 128, received 0."). All steps of one field carry the same
 * phrase, so `"2"`, `1.5` and `0` for `n` all say the same thing.
 *
 * A message starting with `MISSING` marks an issue that stands for an absent field (e.g. `input:
 * null`, or a chat message with neither `content` nor `tool_calls`); `validateBody` reports it as
 * `missing_required_parameter`, with the rest of the message as a hint.
 */
export const MISSING = '\u0000missing:';

/** Message of an issue that means "this field is required"; `hint` is appended to the sentence. */
export function missing(hint = ''): string {
  return MISSING + hint;
}

export { isRecord as isPlainObject };

/** Spec type `string`. */
export const str = (expected = 'a string') => v.string(expected);

/** A string of at least one character. */
export const nonEmptyStr = (expected = 'a non-empty string') => v.pipe(v.string(expected), v.minLength(1, expected));

/** Spec type `boolean`: a JSON boolean; `"true"` is not one. */
export const bool = () => v.boolean('a boolean');

/** Spec type `any`, for a field that must be present with any value (JSON has no `undefined`). */
export const anyValue = () => v.unknown();

/**
 * Spec type `object`: a JSON object, never an array or null (valibot's own object schemas accept
 * arrays). Unknown keys are kept: `additionalProperties` is true everywhere in the spec.
 */
export function obj(expected = 'an object') {
  return v.pipe(v.custom<Record<string, unknown>>(isRecord, expected), v.looseObject({}, expected));
}

/** A JSON object with some known keys typed and every other key kept. */
export function looseObj<const E extends v.ObjectEntries>(entries: E, expected = 'an object') {
  return v.pipe(v.custom<Record<string, unknown>>(isRecord, expected), v.looseObject(entries, expected));
}

/** Spec type `array of objects`. */
export function arrayOfObjects(expected = 'an array of objects') {
  return v.array(obj(), expected);
}

export function arrayOfStrings(expected = 'an array of strings') {
  return v.array(v.string('a string'), expected);
}

interface IntRange {
  min?: number;
  max?: number;
}

function rangePhrase(noun: string, { min, max }: IntRange, format: (n: number) => string = String): string {
  if (min !== undefined && max !== undefined) return `${noun} from ${format(min)} to ${format(max)}`;
  if (min !== undefined) return `${noun} greater than or equal to ${format(min)}`;
  if (max !== undefined) return `${noun} less than or equal to ${format(max)}`;
  return noun;
}

/** Spec type `integer` with an optional inclusive range: `1.5`, `"2"` and out-of-range values fail. */
export function int(range: IntRange = {}) {
  const expected = rangePhrase('an integer', range);
  return v.pipe(
    v.number(expected),
    v.integer(expected),
    v.minValue(range.min ?? Number.MIN_SAFE_INTEGER, expected),
    v.maxValue(range.max ?? Number.MAX_SAFE_INTEGER, expected),
  );
}

/** Spec type `number`: finite, with an optional inclusive range. */
export function num(range: IntRange = {}, format?: (n: number) => string) {
  const expected = rangePhrase('a number', range, format);
  return v.pipe(
    v.number(expected),
    v.finite(expected),
    v.minValue(range.min ?? -Number.MAX_VALUE, expected),
    v.maxValue(range.max ?? Number.MAX_VALUE, expected),
  );
}

/** A string among `options`; the message lists them quoted. */
export function oneOf<const T extends readonly string[]>(options: T) {
  return v.picklist(options, `one of ${options.map((option) => `'${option}'`).join(', ')}`);
}

/**
 * `string, or array of min to max strings` without a valibot union issue: any array takes the
 * array branch, so a bad item is reported at its own path (`image[3]`) and a bad length at the
 * field itself.
 */
export function stringOrStrings(min: number, max: number) {
  const expected = `a string or an array of ${min} to ${max} strings`;
  return v.union(
    [
      v.string(expected),
      // `custom` rather than `array(string())`: an array with a bad item stays "typed", so the
      // union hands back this branch's issue (at `image[3]`) instead of a vague union issue.
      v.pipe(
        v.custom<string[]>(Array.isArray, expected),
        v.minLength(min, expected),
        v.maxLength(max, expected),
        v.checkItems((item) => typeof item === 'string', 'a string'),
      ),
    ],
    expected,
  );
}

/**
 * The body of a text-to-media or text request always names a model. A string that can never be
 * one (empty, too long, control characters, a `.`/`..` segment: `routing/model-id.ts`) is refused
 * here, before the catalog or any cache sees it, rather than looked up as an unknown model.
 */
export const model = () => v.pipe(v.string(MODEL_ID_EXPECTED), v.check(isModelId, MODEL_ID_EXPECTED));
