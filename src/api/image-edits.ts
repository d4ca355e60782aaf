import type { RouteContext } from '../http/route.js';
import type { ModelEntry } from '../routing/model.js';
import { checkEditFiles, imageEditFieldsSchema, isImageField } from '../schemas/image-edit.js';
import { validateBody } from '../schemas/validate.js';
import { imageResponse } from './image-response.js';
import { checkEditRules } from './image-rules.js';
import { addHeaders } from '../http/add-headers.js';
import { runMediaCall, upstreamModel } from './media-call.js';
import { readUploadForm } from './upload-form.js';

/** POST /v1/images/edits (multipart): `image`, `image[]` or repeated `image` files, and `mask`. */
export async function editImages(context: RouteContext): Promise<Response> {
  const { options, key } = context;
  const { fields, files } = await readUploadForm(context, { fileField: 'image', onFile: editRulesAsFilesArrive(context) });
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

/**
 * The model's edit rules as each file arrives, when the form named the model before its files:
 * a model that takes no edits stops the reading at the first file, a Seedream edit at its 11th
 * image or at a mask. Otherwise (the model after the files, or not one the key may use) the
 * rules are checked once the form is read, as they always are.
 */
function editRulesAsFilesArrive({ options, key }: RouteContext): (field: string, fields: Readonly<Record<string, string>>) => void {
  let images = 0;
  let mask = false;
  return (field, fields) => {
    if (isImageField(field)) images++;
    else if (field === 'mask') mask = true;
    if (fields.model === undefined) return;
    let model: ModelEntry;
    try {
      model = options.catalog.resolve(key, fields.model, 'image', '/v1/images/edits');
    } catch {
      return;
    }
    checkEditRules(model, {}, images, mask);
  };
}
