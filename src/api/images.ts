import { readJsonBody } from '../http/read-json.js';
import type { RouteContext } from '../http/route.js';
import { imageRequestSchema } from '../schemas/images.js';
import { validateBody } from '../schemas/validate.js';
import { imageResponse } from './image-response.js';
import { checkGenerationRules } from './image-rules.js';
import { addHeaders } from '../http/add-headers.js';
import { runMediaCall, upstreamModel } from './media-call.js';

/** POST /v1/images/generations */
export async function generateImages(context: RouteContext): Promise<Response> {
  const { request, options, key } = context;
  const body = validateBody(imageRequestSchema, await readJsonBody(request, options.limits.jsonBodyBytes, options.limits.requestBodyTimeoutMs));
  const model = options.catalog.resolve(key, body.model, 'image', '/v1/images/generations');
  checkGenerationRules(model, body);
  const stream = body.stream === true;
  const media = { model, kind: 'image', endpoint: '/v1/images/generations', stream, capability: 'images.generate', what: 'Image generation' } as const;
  const { result, ledger } = await runMediaCall(context, media, (provider, call) =>
    provider.images.generate({ ...body, model: upstreamModel(call.model) }, call),
  );
  return addHeaders(await imageResponse(result, stream, 'image_generation', options.logger, ledger), ledger.headers);
}
