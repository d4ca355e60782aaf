import { GatewayError } from '../errors.js';
import type { ModelEntry } from '../routing/model.js';

/**
 * The spec's per-family image rules (section 4 rule 4, section 8), checked before any upstream
 * call; each violation is a 400 naming the field. A model without a `family` has only the schema's
 * limits.
 * - `gpt-image`: n = 1; no reference images on generation; no edits.
 * - `seedream`: n = 1 for generation and edits; generation takes text only or 1–10 reference
 *   images (the schema checks the count); edits take 1–10 uploaded images and no mask.
 */
const MAX_REFERENCES = 10;

export function checkGenerationRules(model: ModelEntry, body: { n?: number | undefined; image?: string | string[] | undefined }): void {
  if (model.family === 'gpt-image' || model.family === 'seedream') requireSingle(model, body.n);
  if (model.family === 'gpt-image' && body.image !== undefined) {
    throw new GatewayError({
      status: 400,
      param: 'image',
      code: 'unsupported_parameter',
      message: `The model \`${model.id}\` does not take reference images; send a text prompt only.`,
    });
  }
}

export function checkEditRules(model: ModelEntry, body: { n?: number | undefined }, imageCount: number, hasMask: boolean): void {
  if (model.family === 'gpt-image') {
    throw new GatewayError({
      status: 400,
      param: 'model',
      code: 'model_not_supported',
      message: `The model \`${model.id}\` does not support image edits; use /v1/images/generations.`,
    });
  }
  if (model.family !== 'seedream') return;
  requireSingle(model, body.n);
  if (imageCount > MAX_REFERENCES) {
    throw new GatewayError({
      status: 400,
      param: 'image',
      code: 'invalid_value',
      message: `The model \`${model.id}\` takes 1 to ${MAX_REFERENCES} images to edit, received ${imageCount}.`,
    });
  }
  if (hasMask) {
    throw new GatewayError({
      status: 400,
      param: 'mask',
      code: 'unsupported_parameter',
      message: `The model \`${model.id}\` does not take a mask; describe the change in the prompt.`,
    });
  }
}

function requireSingle(model: ModelEntry, n: number | undefined): void {
  if (n !== undefined && n !== 1) {
    throw new GatewayError({
      status: 400,
      param: 'n',
      code: 'invalid_value',
      message: `Invalid value for 'n': the model \`${model.id}\` generates one image per request (n = 1), received ${n}.`,
    });
  }
}
