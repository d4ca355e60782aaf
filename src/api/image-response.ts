import { toPublicError } from '../errors.js';
import { startIterable } from '../http/first-item.js';
import { jsonResponse } from '../http/json-response.js';
import { sseResponse } from '../http/sse-response.js';
import type { ImageResult, ImageStream, ImageStreamEvent } from '../providers/media.js';
import type { Logger } from '../logger.js';
import type { RequestLedger } from '../policy/request-ledger.js';
import { responsesUpstream } from '../protocols/responses/index.js';

/** `image_generation` for `/v1/images/generations`, `image_edit` for `/v1/images/edits`. */
export type ImageEventPrefix = 'image_generation' | 'image_edit';

/**
 * Answers an image call: the ImageResponse JSON (spec 2.7), or, when the client asked for a
 * stream, partial-image SSE events (`<prefix>.partial_image` …, then `<prefix>.completed` per
 * image) with `event:` lines repeating the type. A provider that could not stream gave a whole
 * result: it becomes one `completed` event per image. The first event is awaited before the
 * response starts, so an upstream that fails at once gets its own status; a later failure ends
 * the stream with an `error` event (which the OpenAI SDKs throw).
 */
export async function imageResponse(
  output: ImageResult | ImageStream,
  stream: boolean,
  prefix: ImageEventPrefix,
  logger: Logger,
  ledger: RequestLedger,
): Promise<Response> {
  if (!stream) {
    let result: ImageResult;
    try {
      result = 'events' in output ? await collect(output.events) : output;
    } catch (error) {
      ledger.finish({ status: 'error', error });
      throw error;
    }
    ledger.finish({ status: 'ok', usage: responsesUpstream.usageOf(result.usage), units: { images: result.data.length } });
    return jsonResponse({ created: result.created, data: result.data, ...result.extra, ...(result.usage ? { usage: result.usage } : {}) });
  }
  let events: AsyncIterable<ImageStreamEvent>;
  try {
    events = await startIterable('events' in output ? output.events : completedEvents(output));
  } catch (error) {
    ledger.finish({ status: 'error', error });
    throw error;
  }
  return sseResponse(frames(events, prefix, logger, ledger));
}

async function* frames(events: AsyncIterable<ImageStreamEvent>, prefix: ImageEventPrefix, logger: Logger, ledger: RequestLedger): AsyncGenerator<string> {
  let images = 0;
  let usage: unknown;
  let failure: unknown;
  try {
    for await (const event of events) {
      ledger.firstByte();
      if (event.type === 'completed') images++;
      if (event.usage) usage = event.usage;
      const type = `${prefix}.${event.type}`;
      const payload = { ...event, type, created_at: typeof event.created_at === 'number' ? event.created_at : Math.floor(Date.now() / 1000) };
      yield `event: ${type}\ndata: ${JSON.stringify(payload)}\n\n`;
    }
  } catch (error) {
    failure = error;
    const err = toPublicError(error);
    if (err.status >= 500) logger.warn('image stream failed', { requestId: ledger.requestId, status: err.status, message: err.message });
    yield `event: error\ndata: ${JSON.stringify({ type: 'error', error: { message: err.message, type: err.type, param: err.param, code: err.code } })}\n\n`;
  } finally {
    // Also reached when the client leaves mid-stream: charged for the images it got.
    ledger.finish({
      status: failure === undefined && images > 0 ? 'ok' : 'error',
      usage: responsesUpstream.usageOf(usage),
      units: { images },
      error: failure,
    });
  }
}

async function* completedEvents(result: ImageResult): AsyncGenerator<ImageStreamEvent> {
  for (const image of result.data) {
    yield {
      type: 'completed',
      b64_json: image.b64_json ?? '',
      ...(image.url ? { url: image.url } : {}),
      ...(image.revised_prompt ? { revised_prompt: image.revised_prompt } : {}),
      created_at: result.created,
      ...result.extra,
      ...(result.usage ? { usage: result.usage } : {}),
    };
  }
}

/** A stream read to the end as one result: its `completed` images, in order. */
async function collect(events: AsyncIterable<ImageStreamEvent>): Promise<ImageResult> {
  const result: ImageResult = { created: Math.floor(Date.now() / 1000), data: [] };
  for await (const event of events) {
    if (event.type !== 'completed') continue;
    result.data.push({ b64_json: event.b64_json });
    if (typeof event.created_at === 'number') result.created = event.created_at;
    if (event.usage && typeof event.usage === 'object') result.usage = event.usage as Record<string, unknown>;
  }
  return result;
}
