import { readJsonBody } from '../http/read-json.js';
import type { RouteContext } from '../http/route.js';
import { imageRequestSchema } from '../schemas/images.js';
import { validateBody } from '../schemas/validate.js';
import { mediaUnavailable } from './media-unavailable.js';

/** POST /v1/images/generations */
export async function generateImages({ request, options, key }: RouteContext): Promise<Response> {
  const body = validateBody(imageRequestSchema, await readJsonBody(request, options.limits.jsonBodyBytes));
  const model = options.catalog.resolve(key, body.model, 'image', '/v1/images/generations');
  throw mediaUnavailable(model, 'Image generation');
}
