import { readJsonBody } from '../http/read-json.js';
import type { RouteContext } from '../http/route.js';
import { speechRequestSchema } from '../schemas/speech.js';
import { validateBody } from '../schemas/validate.js';
import { mediaUnavailable } from './media-unavailable.js';

/** POST /v1/audio/speech */
export async function createSpeech({ request, options, key }: RouteContext): Promise<Response> {
  const body = validateBody(speechRequestSchema, await readJsonBody(request, options.limits.jsonBodyBytes));
  const model = options.catalog.resolve(key, body.model, 'speech', '/v1/audio/speech');
  throw mediaUnavailable(model, 'Speech synthesis');
}
