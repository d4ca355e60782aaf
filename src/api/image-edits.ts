import { readMultipartBody } from '../http/read-multipart.js';
import type { RouteContext } from '../http/route.js';
import { checkEditFiles, imageEditFieldsSchema } from '../schemas/image-edit.js';
import { validateBody } from '../schemas/validate.js';
import { mediaUnavailable } from './media-unavailable.js';

/** POST /v1/images/edits (multipart) */
export async function editImages({ request, options, key }: RouteContext): Promise<Response> {
  const { fields, files } = await readMultipartBody(request, {
    fileBytes: options.limits.uploadFileBytes,
    files: options.limits.uploadFiles,
    fieldBytes: 1024 * 1024,
    fields: 64,
  });
  const body = validateBody(imageEditFieldsSchema, fields);
  checkEditFiles(files.map((file) => ({ field: file.field, filename: file.filename, size: file.data.length })));
  const model = options.catalog.resolve(key, body.model, 'image', '/v1/images/edits');
  throw mediaUnavailable(model, 'Image editing');
}
