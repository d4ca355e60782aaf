import { readJsonBody } from '../http/read-json.js';
import type { RouteContext } from '../http/route.js';
import { imageRequestSchema } from '../schemas/images.js';
import { validateBody } from '../schemas/validate.js';
import { imageResponse } from './image-response.js';
import { checkGenerationRules } from './image-rules.js';
import { callContext, mediaProvider, upstreamModel } from './media-call.js';

/** POST /v1/images/generations */
export async function generateImages(context: RouteContext): Promise<Response> {
  const { request, options, key } = context;
  const body = validateBody(imageRequestSchema, await readJsonBody(request, options.limits.jsonBodyBytes));
  const model = options.catalog.resolve(key, body.model, 'image', '/v1/images/generations');
  checkGenerationRules(model, body);
  const provider = mediaProvider(context, model, 'generateImage', 'Image generation');
  const output = await provider.generateImage({ ...body, model: upstreamModel(model) }, callContext(context, model));
  return imageResponse(output, body.stream === true, 'image_generation', options.logger, context.requestId);
}
