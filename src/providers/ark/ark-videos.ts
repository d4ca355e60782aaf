import { GatewayError, upstreamInvalidResponse } from '../../errors.js';
import { getJson } from '../http/get-json.js';
import { postJson } from '../http/json-call.js';
import type { UpstreamClient } from '../http/upstream-client.js';
import { videoContentOf } from '../http/video-content.js';
import type { TaskCallContext, VideoJob, VideoJobStatus, VideoRequest } from '../media.js';
import type { VideoCapability } from '../provider.js';
import type { TaskStatus } from '../../tasks/task-store.js';

const RATIOS = ['16:9', '4:3', '1:1', '3:4', '9:16', '21:9'];
const RESOLUTIONS = ['480p', '720p', '1080p'];

/**
 * Seedance video tasks on Ark (`/contents/generations/tasks`). The request maps onto `content`:
 * the prompt as a `text` item, `image` as the `first_frame`, `images` as `reference_image`s, then
 * `metadata.content` items as they are; `seconds`/`duration` → `duration`; `size` (`1280x720`) →
 * `ratio` and `resolution`; the metadata keys `resolution`, `ratio`, `generate_audio`,
 * `watermark`, `service_tier` become the fields of the same name and other metadata keys are
 * passed on as Seedance fields (`seed`, `camera_fixed`…). Ark reports no progress, so running
 * tasks get an estimate that grows with time and stays below 100 until they succeed.
 */
export function arkVideos(client: UpstreamClient, now: () => number = Date.now): VideoCapability {
  const fetchTask = async (id: string, call: TaskCallContext) =>
    (await getJson(client, `/contents/generations/tasks/${encodeURIComponent(id)}`, call)) as Record<string, unknown>;

  return {
    async create(request, call) {
      const answer = (await postJson(client, '/contents/generations/tasks', createBody(request), call)) as { id?: unknown };
      if (typeof answer.id !== 'string') throw upstreamInvalidResponse('The upstream task answer has no id.');
      return { id: answer.id };
    },

    async get(job, call) {
      return taskStatus(await fetchTask(job.id, call), now());
    },

    async content(job, { range }, call) {
      let url = videoUrl(job);
      if (!url) url = videoUrl({ id: job.id, ...taskStatus(await fetchTask(job.id, call), now()) });
      if (!url) throw upstreamInvalidResponse('The upstream task has no video URL.');
      return videoContentOf(await client.download(url, { signal: call.signal, idleTimeoutMs: call.idleTimeoutMs, ...(range ? { headers: { range } } : {}) }));
    },
  };
}

function createBody(request: VideoRequest): Record<string, unknown> {
  const { model, prompt, duration, seconds, image, images, size, metadata, ...extra } = request;
  const { content: moreContent, ...meta } = metadata ?? {};
  const content: Record<string, unknown>[] = [{ type: 'text', text: prompt }];
  if (image !== undefined) content.push({ type: 'image_url', image_url: { url: image }, role: 'first_frame' });
  for (const url of images ?? []) content.push({ type: 'image_url', image_url: { url }, role: 'reference_image' });
  content.push(...((moreContent as Record<string, unknown>[] | undefined) ?? []));

  const fields: Record<string, unknown> = { ...extra, ...meta };
  if (size !== undefined) {
    if (meta.ratio !== undefined || meta.resolution !== undefined) {
      throw new GatewayError({
        status: 400,
        param: 'size',
        code: 'invalid_value',
        message: "Send either 'size' or 'metadata.ratio'/'metadata.resolution', not both.",
      });
    }
    Object.assign(fields, ratioAndResolution(size));
  }
  const length = seconds ?? duration;
  if (length !== undefined) {
    const n = typeof length === 'string' ? Number(length) : length;
    if (!Number.isInteger(n))
      throw new GatewayError({
        status: 400,
        param: 'seconds',
        code: 'unsupported_value',
        message: `Seedance takes a whole number of seconds: 'seconds' was ${JSON.stringify(length)}.`,
      });
    fields.duration = n;
  }
  return { model, content, ...fields };
}

/** `1280x720` → `{ ratio: '16:9', resolution: '720p' }`; sizes Seedance cannot express are a 400. */
function ratioAndResolution(size: string): { ratio: string; resolution: string } {
  const match = /^(\d+)x(\d+)$/.exec(size);
  if (match) {
    const width = Number(match[1]);
    const height = Number(match[2]);
    const divisor = gcd(width, height);
    const ratio = `${width / divisor}:${height / divisor}`;
    const resolution = `${Math.min(width, height)}p`;
    if (RATIOS.includes(ratio) && RESOLUTIONS.includes(resolution)) return { ratio, resolution };
  }
  throw new GatewayError({
    status: 400,
    param: 'size',
    code: 'unsupported_value',
    message: `Seedance cannot make 'size' ${JSON.stringify(size)}: it takes a ${RATIOS.join(', ')} picture at ${RESOLUTIONS.join(', ')} (e.g. 1280x720); or send 'metadata.ratio' and 'metadata.resolution'.`,
  });
}

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}

/** A Map, not an object: an upstream status such as `constructor` must not find an inherited key. */
const STATUSES = new Map<string, TaskStatus>([
  ['queued', 'queued'],
  ['running', 'in_progress'],
  ['succeeded', 'completed'],
  ['failed', 'failed'],
  ['cancelled', 'failed'],
  ['expired', 'failed'],
]);

function taskStatus(task: Record<string, unknown>, nowMs: number): VideoJobStatus {
  const upstream = String(task.status);
  const status = STATUSES.get(upstream) ?? 'unknown';
  const content = task.content as { video_url?: unknown } | undefined;
  const createdAt = typeof task.created_at === 'number' ? task.created_at : undefined;
  if (status === 'completed') {
    return {
      status,
      progress: 100,
      completedAt: typeof task.updated_at === 'number' ? task.updated_at : undefined,
      state: typeof content?.video_url === 'string' ? { video_url: content.video_url } : undefined,
    };
  }
  if (status === 'failed') {
    const error = task.error as { message?: unknown; code?: unknown } | undefined;
    return {
      status,
      error: {
        message: typeof error?.message === 'string' ? error.message : `The video task ended as ${upstream}.`,
        code: typeof error?.code === 'string' ? error.code : upstream === 'failed' ? 'video_generation_failed' : `task_${upstream}`,
      },
    };
  }
  if (status === 'in_progress' && createdAt !== undefined) {
    // Ark reports no progress: an estimate that approaches 95 over a few minutes.
    const elapsed = Math.max(0, nowMs / 1000 - createdAt);
    return { status, progress: 5 + Math.floor(90 * (1 - Math.exp(-elapsed / 90))) };
  }
  return { status, progress: 0 };
}

function videoUrl(job: VideoJob): string | undefined {
  const url = job.state?.video_url;
  return typeof url === 'string' ? url : undefined;
}
