import * as v from 'valibot';
import { GatewayError } from '../errors.js';
import { looseObj, model, str } from './common.js';
import { IMAGE_N } from './images.js';

/** A decimal integer written as multipart text (`"2"`), converted to a number and range-checked. */
function intField(range: { min?: number; max?: number } = {}) {
  const { min, max } = range;
  const expected =
    min !== undefined && max !== undefined
      ? `an integer from ${min} to ${max}`
      : min !== undefined
        ? `an integer greater than or equal to ${min}`
        : 'an integer';
  return v.pipe(
    v.string(expected),
    v.regex(/^[+-]?\d+$/, expected),
    v.transform(Number),
    v.minValue(min ?? Number.MIN_SAFE_INTEGER, expected),
    v.maxValue(max ?? Number.MAX_SAFE_INTEGER, expected),
  );
}

/** `"true"` / `"false"` (multipart has no booleans), converted to a boolean. */
export function boolField() {
  return v.pipe(
    v.picklist(['true', 'false'], "'true' or 'false'"),
    v.transform((value) => value === 'true'),
  );
}

/**
 * The text fields of `POST /v1/images/edits` (spec 2.6), as the multipart parser collects them
 * (`{ name: value }`, every value a string). `n`, `partial_images` and `stream` come out as a
 * number and a boolean; unknown fields are kept as they came. Files are checked by
 * `checkEditFiles`.
 */
export const imageEditFieldsSchema = looseObj(
  {
    model: model(),
    prompt: str(),
    n: v.optional(intField(IMAGE_N)),
    size: v.optional(str()),
    quality: v.optional(str()),
    output_format: v.optional(str()),
    input_fidelity: v.optional(str()),
    stream: v.optional(boolField()),
    partial_images: v.optional(intField()),
  },
  'a multipart form',
);

export type ImageEditFields = v.InferOutput<typeof imageEditFieldsSchema>;

/** A file part of the edit request, as the multipart parser describes it. */
export interface EditFile {
  /** The form field name: `image`, `image[]`, `image[0]`, `mask`, … */
  field: string;
  filename?: string;
  size: number;
}

const IMAGE_FIELD = /^image(?:\[\d*\])?$/;

/** Whether a file part's field holds an image to edit (`image`, `image[]`, `image[2]`). */
export function isImageField(field: string): boolean {
  return IMAGE_FIELD.test(field);
}

/**
 * Checks the files of an edit request: at least one image (fields `image`, `image[]`,
 * `image[0]`, …), none empty, at most one `mask`. Returns them split; files under other field
 * names are ignored (kept in the caller's list).
 */
export function checkEditFiles<F extends EditFile>(files: readonly F[]): { images: F[]; mask: F | undefined } {
  const images = files.filter((file) => IMAGE_FIELD.test(file.field));
  const masks = files.filter((file) => file.field === 'mask');
  if (images.length === 0) {
    throw new GatewayError({
      status: 400,
      type: 'invalid_request_error',
      code: 'missing_required_parameter',
      param: 'image',
      message: "Missing required parameter: 'image'. Upload at least one image file as 'image' (or 'image[]' for several).",
    });
  }
  const empty = images.findIndex((file) => file.size === 0);
  if (empty !== -1) {
    throw new GatewayError({
      status: 400,
      type: 'invalid_request_error',
      code: 'invalid_value',
      param: images.length === 1 ? 'image' : `image[${empty}]`,
      message: `Invalid value for 'image': expected a non-empty image file, received an empty file${nameOf(images[empty])}.`,
    });
  }
  if (masks.length > 1) {
    throw new GatewayError({
      status: 400,
      type: 'invalid_request_error',
      code: 'invalid_value',
      param: 'mask',
      message: `Invalid value for 'mask': expected at most one mask file, received ${masks.length}.`,
    });
  }
  const mask = masks[0];
  if (mask && mask.size === 0) {
    throw new GatewayError({
      status: 400,
      type: 'invalid_request_error',
      code: 'invalid_value',
      param: 'mask',
      message: `Invalid value for 'mask': expected a non-empty image file, received an empty file${nameOf(mask)}.`,
    });
  }
  return { images, mask };
}

function nameOf(file: EditFile | undefined): string {
  return file?.filename ? ` (${JSON.stringify(file.filename.slice(0, 100))})` : '';
}
