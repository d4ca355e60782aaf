import type { RouteContext } from '../http/route.js';
import { checkEditFiles, imageEditFieldsSchema } from '../schemas/image-edit.js';
import { validateBody } from '../schemas/validate.js';
import { imageResponse } from './image-response.js';
import { checkEditRules } from './image-rules.js';
import { addHeaders } from '../http/add-headers.js';
import { runMediaCall, upstreamModel } from './media-call.js';
import { readUploadForm } from './upload-form.js';

/** POST /v1/images/edits (multipart): `image`, `image[]` or repeated `image` files, and `mask`. */
export async function editImages(context: RouteContext): Promise<Response> {
  const { options, key } = context;
  const { fields, files } = await readUploadForm(context, 'image');
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
