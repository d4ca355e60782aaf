import { upstreamInvalidResponse } from '../../errors.js';
import { unixSeconds } from '../../ids.js';
import { readJson } from '../http/get-json.js';
import { multipartBody, type MultipartPart } from '../http/multipart-body.js';
import type { UpstreamClient, UpstreamResult } from '../http/upstream-client.js';
import { upstreamError } from '../http/upstream-error.js';
import type { ImageResult, ImageStream, ImageStreamEvent } from '../media.js';
import type { ImageCapability } from '../provider.js';
import { mediaStreamEvents } from './media-stream-events.js';

/**
 * OpenAI's Images API: generations (JSON) and edits (multipart), each as a whole answer or as
 * partial-image SSE events. The client's fields go on as they came (only `model` mapped); edit
 * files keep their field names (`image`, `image[]`), file names and types.
 */
export function openAIImages(client: UpstreamClient): ImageCapability {
  return {
    async generate(request, call) {
      const stream = request.stream === true;
      const result = await client.post('/images/generations', JSON.stringify(request), {
        signal: call.signal,
        idleTimeoutMs: call.idleTimeoutMs,
        upstreamWait: call.upstreamWait,
        headers: { accept: stream ? 'text/event-stream' : 'application/json' },
      });
      return imageOutput(result, stream);
    },

    async edit({ fields, images, mask }, call) {
      const parts: MultipartPart[] = [];
      for (const [name, value] of Object.entries(fields)) {
        if (value === undefined || value === null) continue;
        parts.push({ name, value: typeof value === 'object' ? JSON.stringify(value) : String(value) });
      }
      for (const file of mask ? [...images, mask] : images) {
        // The chunks as uploaded: `file.data` would join them, a copy of the whole file for nothing.
        parts.push({
          name: file.field,
          value: { data: file.chunks ?? file.data, filename: file.filename, contentType: file.mimeType || 'application/octet-stream' },
        });
      }
      const { body, contentType } = multipartBody(parts);
      const stream = fields.stream === true;
      const result = await client.post('/images/edits', body, {
        signal: call.signal,
        idleTimeoutMs: call.idleTimeoutMs,
        upstreamWait: call.upstreamWait,
        contentType,
        headers: { accept: stream ? 'text/event-stream' : 'application/json' },
      });
      return imageOutput(result, stream);
    },
  };
}

async function imageOutput(result: UpstreamResult, stream: boolean): Promise<ImageResult | ImageStream> {
  if (result.status >= 400) throw await upstreamError(result);
  if (stream) return { events: imageEvents(result) };
  return toImageResult((await readJson(result)) as Record<string, unknown>);
}

/** An ImagesResponse as the gateway's `ImageResult`: `created`, `data`, `usage`, the rest kept. */
export function toImageResult(json: Record<string, unknown>): ImageResult {
  const { created, data, usage, ...extra } = json;
  if (!Array.isArray(data)) throw upstreamInvalidResponse('The upstream image answer has no data.');
  return {
    created: typeof created === 'number' ? created : unixSeconds(),
    data: data as ImageResult['data'],
    usage: usage && typeof usage === 'object' ? (usage as Record<string, unknown>) : undefined,
    extra,
  };
}

/** `image_generation.partial_image` / `image_edit.completed` … as prefix-less events; an error event throws. */
async function* imageEvents(result: UpstreamResult): AsyncGenerator<ImageStreamEvent> {
  for await (const event of mediaStreamEvents(result, 'image')) {
    const kind = event.type.slice(event.type.lastIndexOf('.') + 1);
    if (kind === 'partial_image' || kind === 'completed') yield { ...event, type: kind, b64_json: String(event.b64_json ?? '') };
  }
}
