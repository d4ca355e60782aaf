import { streamBody } from '../http/binary-response.js';
import { startIterable } from '../http/first-item.js';
import { readJsonBody } from '../http/read-json.js';
import type { RouteContext } from '../http/route.js';
import { speechRequestSchema } from '../schemas/speech.js';
import { validateBody } from '../schemas/validate.js';
import { settleAfter } from '../policy/usage-report.js';
import { runMediaCall, upstreamModel } from './media-call.js';

/** Content type of each `response_format` (spec section 4). */
const CONTENT_TYPES = { mp3: 'audio/mpeg', wav: 'audio/wav', opus: 'audio/ogg' } as const;

/**
 * POST /v1/audio/speech: the audio is streamed to the client as the provider produces it. The
 * first chunk is awaited first, so an upstream that fails at once gets its own status.
 */
export async function createSpeech(context: RouteContext): Promise<Response> {
  const { request, options, key } = context;
  const body = validateBody(speechRequestSchema, await readJsonBody(request, options.limits.jsonBodyBytes, options.limits.requestBodyTimeoutMs));
  const model = options.catalog.resolve(key, body.model, 'speech', '/v1/audio/speech');
  const format = body.response_format ?? 'mp3';
  const media = { model, kind: 'speech', endpoint: '/v1/audio/speech', stream: true, capability: 'speech', what: 'Speech synthesis' } as const;
  // The first chunk is part of the attempt: an upstream that fails before any audio can still fall back.
  const { result: audio, ledger } = await runMediaCall(context, media, async (provider, call) =>
    startIterable(await provider.speech.synthesize({ ...body, model: upstreamModel(call.model) }, call)),
  );
  ledger.firstByte();
  const settled = settleAfter(audio, (status, error) => ledger.finish({ status, units: { characters: body.input.length }, error }));
  return new Response(streamBody(settled, context.serverContext), {
    status: 200,
    headers: { 'content-type': CONTENT_TYPES[format], 'cache-control': 'no-cache', ...ledger.headers },
  });
}
