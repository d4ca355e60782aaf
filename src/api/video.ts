import { GatewayError } from '../errors.js';
import { jsonResponse } from '../http/json-response.js';
import { readJsonBody } from '../http/read-json.js';
import type { RouteContext } from '../http/route.js';
import { videoRequestSchema } from '../schemas/video.js';
import { validateBody } from '../schemas/validate.js';
import type { VideoTaskRecord } from '../tasks/task-store.js';
import { mediaUnavailable } from './media-unavailable.js';

/** POST /v1/video/generations */
export async function createVideo({ request, options, key }: RouteContext): Promise<Response> {
  const body = validateBody(videoRequestSchema, await readJsonBody(request, options.limits.jsonBodyBytes));
  const model = options.catalog.resolve(key, body.model, 'video', '/v1/video/generations');
  throw mediaUnavailable(model, 'Video generation');
}

/** GET /v1/video/generations/{task_id} */
export async function getVideo(context: RouteContext): Promise<Response> {
  const task = await findTask(context);
  return jsonResponse(videoTaskView(task));
}

/** GET /v1/videos/{task_id}/content: 409 until the task has completed. */
export async function getVideoContent(context: RouteContext): Promise<Response> {
  const task = await findTask(context);
  if (task.status !== 'completed') {
    throw new GatewayError({
      status: 409,
      message: `The video task ${task.id} is ${task.status}; its content can be downloaded once it has completed.`,
      code: 'video_not_ready',
    });
  }
  const model = context.options.catalog.get(task.model);
  throw mediaUnavailable(model ?? { id: task.model, provider: task.provider }, 'Video download');
}

/** A task of another key is as unknown as a missing one: its id reveals nothing. */
async function findTask({ options, params, key }: RouteContext): Promise<VideoTaskRecord> {
  const id = params.task_id ?? '';
  const task = await options.taskStore.get(id);
  if (!task || task.keyId !== key.id) {
    throw new GatewayError({ status: 404, message: `No video task with id ${id}.`, param: 'task_id', code: 'task_not_found' });
  }
  return task;
}

/** The spec's VideoTask (section 2.9); upstream ids and providers stay inside. */
export function videoTaskView(task: VideoTaskRecord): Record<string, unknown> {
  return {
    id: task.id,
    task_id: task.id,
    object: 'video',
    model: task.model,
    status: task.status,
    progress: task.progress,
    created_at: task.createdAt,
    ...(task.completedAt !== undefined ? { completed_at: task.completedAt } : {}),
    ...(task.metadata ? { metadata: task.metadata } : {}),
    ...(task.error ? { error: task.error } : {}),
  };
}
