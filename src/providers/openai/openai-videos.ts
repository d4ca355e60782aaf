import { GatewayError, upstreamInvalidResponse } from '../../errors.js';
import { getJson, readJson } from '../http/get-json.js';
import type { UpstreamClient } from '../http/upstream-client.js';
import { videoContentOf } from '../http/video-content.js';
import type { VideoJobStatus, VideoRequest } from '../media.js';
import type { VideoCapability } from '../provider.js';
import type { TaskStatus } from '../../tasks/task-store.js';

/** Keys of the spec's video `metadata` that OpenAI's Videos API has no field for. */
const ARK_ONLY_METADATA = ['resolution', 'ratio', 'content', 'generate_audio', 'watermark', 'service_tier'];

/**
 * OpenAI's Videos API (`/videos` create, retrieve, content). The task-style request maps onto it:
 * `seconds` (or `duration`) → `seconds` as a string, `size` as it is, `image` →
 * `input_reference: { image_url }`; other metadata keys are vendor extras sent as top-level
 * fields. What it cannot express (`images`, the Seedance metadata keys) is a 400 naming it.
 */
export function openAIVideos(client: UpstreamClient): VideoCapability {
  return {
    async create(request, call) {
      const body = createBody(request);
      const result = await client.post('/videos', JSON.stringify(body), {
        signal: call.signal,
        idleTimeoutMs: call.idleTimeoutMs,
        upstreamWait: call.upstreamWait,
      });
      const video = (await readJson(result)) as { id?: unknown };
      if (typeof video.id !== 'string') throw upstreamInvalidResponse('The upstream video answer has no id.');
      return { id: video.id };
    },

    async get(job, call) {
      return videoStatus((await getJson(client, `/videos/${encodeURIComponent(job.id)}`, call)) as Record<string, unknown>);
    },

    async content(job, { range }, call) {
      const result = await client.get(`/videos/${encodeURIComponent(job.id)}/content`, {
        signal: call.signal,
        idleTimeoutMs: call.idleTimeoutMs,
        headers: { accept: 'application/binary', ...(range ? { range } : {}) },
      });
      return videoContentOf(result);
    },
  };
}

function createBody(request: VideoRequest): Record<string, unknown> {
  const { model, prompt, duration, seconds, image, images, size, metadata, ...extra } = request;
  if (images !== undefined) {
    throw new GatewayError({
      status: 400,
      param: 'images',
      code: 'unsupported_parameter',
      message: "This model takes one reference image: send it as 'image'.",
    });
  }
  const vendor: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(metadata ?? {})) {
    if (ARK_ONLY_METADATA.includes(key)) {
      throw new GatewayError({
        status: 400,
        param: `metadata.${key}`,
        code: 'unsupported_parameter',
        message: `This model does not support 'metadata.${key}'.`,
      });
    }
    vendor[key] = value;
  }
  const length = seconds ?? duration;
  return {
    ...extra,
    ...vendor,
    model,
    prompt,
    ...(length !== undefined ? { seconds: String(length) } : {}),
    ...(size !== undefined ? { size } : {}),
    ...(image !== undefined ? { input_reference: { image_url: image } } : {}),
  };
}

/** A Map, not an object: an upstream status such as `constructor` must not find an inherited key. */
const STATUSES = new Map<string, TaskStatus>([
  ['queued', 'queued'],
  ['in_progress', 'in_progress'],
  ['completed', 'completed'],
  ['failed', 'failed'],
]);

function videoStatus(video: Record<string, unknown>): VideoJobStatus {
  const status = STATUSES.get(String(video.status)) ?? 'unknown';
  const error = video.error as { message?: unknown; code?: unknown } | null | undefined;
  return {
    status,
    progress: typeof video.progress === 'number' ? video.progress : undefined,
    completedAt: typeof video.completed_at === 'number' ? video.completed_at : undefined,
    error:
      status === 'failed'
        ? {
            message: typeof error?.message === 'string' ? error.message : 'The video generation failed.',
            code: typeof error?.code === 'string' ? error.code : 'video_generation_failed',
          }
        : undefined,
  };
}
