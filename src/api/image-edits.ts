import { readMultipartBody } from '../http/read-multipart.js';
import type { RouteContext } from '../http/route.js';
import { checkEditFiles, imageEditFieldsSchema } from '../schemas/image-edit.js';
import { validateBody } from '../schemas/validate.js';
import { imageResponse } from './image-response.js';
import { checkEditRules } from './image-rules.js';
import { callContext, mediaProvider, upstreamModel } from './media-call.js';

/** Largest text field of the edit form (the prompt), and the most text fields accepted. */
const FIELD_BYTES = 1024 * 1024;
const FIELDS = 64;

/** POST /v1/images/edits (multipart): `image`, `image[]` or repeated `image` files, and `mask`. */
export async function editImages(context: RouteContext): Promise<Response> {
  const { request, options, key } = context;
  const { fields, files } = await readMultipartBody(request, {
    fileBytes: options.limits.uploadFileBytes,
    files: options.limits.uploadFiles,
    fieldBytes: FIELD_BYTES,
    fields: FIELDS,
  });
  const body = validateBody(imageEditFieldsSchema, fields);
  const { images, mask } = checkEditFiles(files.map((file) => ({ ...file, size: file.data.length })));
  const model = options.catalog.resolve(key, body.model, 'image', '/v1/images/edits');
  checkEditRules(model, body, images.length, mask !== undefined);
  const provider = mediaProvider(context, model, 'editImage', 'Image editing');
  const output = await provider.editImage(
    { fields: { ...body, model: upstreamModel(model) }, images, ...(mask ? { mask } : {}) },
    callContext(context, model),
  );
  return imageResponse(output, body.stream === true, 'image_edit', options.logger, context.requestId);
}
