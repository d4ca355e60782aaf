import { streamBody } from '../http/binary-response.js';
import { startIterable } from '../http/first-item.js';
import { readJsonBody } from '../http/read-json.js';
import type { RouteContext } from '../http/route.js';
import { speechRequestSchema } from '../schemas/speech.js';
import { validateBody } from '../schemas/validate.js';
import { callContext, mediaProvider, upstreamModel } from './media-call.js';

/** Content type of each `response_format` (spec section 4). */
const CONTENT_TYPES = { mp3: 'audio/mpeg', wav: 'audio/wav', opus: 'audio/ogg' } as const;

/**
 * POST /v1/audio/speech: the audio is streamed to the client as the provider produces it. The
 * first chunk is awaited first, so an upstream that fails at once gets its own status.
 */
export async function createSpeech(context: RouteContext): Promise<Response> {
  const { request, options, key } = context;
  const body = validateBody(speechRequestSchema, await readJsonBody(request, options.limits.jsonBodyBytes));
  const model = options.catalog.resolve(key, body.model, 'speech', '/v1/audio/speech');
  const provider = mediaProvider(context, model, 'synthesizeSpeech', 'Speech synthesis');
  const format = body.response_format ?? 'mp3';
  const audio = await provider.synthesizeSpeech({ ...body, model: upstreamModel(model) }, callContext(context, model));
  const started = await startIterable(audio);
  return new Response(streamBody(started), {
    status: 200,
    headers: { 'content-type': CONTENT_TYPES[format], 'cache-control': 'no-cache' },
  });
}
