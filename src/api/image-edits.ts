import { readMultipartBody } from '../http/read-multipart.js';
import type { RouteContext } from '../http/route.js';
import { checkEditFiles, imageEditFieldsSchema } from '../schemas/image-edit.js';
import { validateBody } from '../schemas/validate.js';
import { imageResponse } from './image-response.js';
import { checkEditRules } from './image-rules.js';
import { addHeaders } from '../http/add-headers.js';
import { runMediaCall, upstreamModel } from './media-call.js';

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
    timeoutMs: options.limits.requestBodyTimeoutMs,
  });
  const body = validateBody(imageEditFieldsSchema, fields);
  // The files as read (not spread: `data` would join each file's chunks, a copy for nothing).
  const { images, mask } = checkEditFiles(files);
  const model = options.catalog.resolve(key, body.model, 'image', '/v1/images/edits');
  checkEditRules(model, body, images.length, mask !== undefined);
  const stream = body.stream === true;
  const media = { model, kind: 'image', endpoint: '/v1/images/edits', stream, capability: 'images.edit', what: 'Image editing' } as const;
  const { result, ledger } = await runMediaCall(context, media, (provider, call) =>
    provider.images.edit({ fields: { ...body, model: upstreamModel(call.model) }, images, mask }, call),
  );
  return addHeaders(await imageResponse(result, stream, 'image_edit', options.logger, ledger), ledger.headers);
}
