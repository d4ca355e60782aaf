import { echo } from '../http/echo.js';
import { GatewayError } from '../errors.js';
import { streamBody } from '../http/binary-response.js';
import { jsonResponse } from '../http/json-response.js';
import { readJsonBody } from '../http/read-json.js';
import type { RouteContext } from '../http/route.js';
import { videoRequestSchema } from '../schemas/video.js';
import { validateBody } from '../schemas/validate.js';
import type { VideoTaskRecord } from '../tasks/task-store.js';
import { addHeaders } from '../http/add-headers.js';
import { runMediaCall, upstreamModel } from './media-call.js';

/** POST /v1/video/generations: submits the task upstream and answers the gateway's task, `queued`. */
export async function createVideo(context: RouteContext): Promise<Response> {
  const { request, options, key } = context;
  const body = validateBody(videoRequestSchema, await readJsonBody(request, options.limits.jsonBodyBytes, options.limits.requestBodyTimeoutMs));
  const model = options.catalog.resolve(key, body.model, 'video', '/v1/video/generations');
  const media = { model, kind: 'video', endpoint: '/v1/video/generations', stream: false, capability: 'video', what: 'Video generation' } as const;
  const { result: task, ledger } = await runMediaCall(context, media, (provider, call) =>
    options.videoTasks.create(provider, { ...body, model: upstreamModel(call.model) }, call),
  );
  const seconds = Number(body.seconds ?? body.duration);
  ledger.finish({ status: 'ok', responseId: task.id, units: Number.isFinite(seconds) ? { videoSeconds: seconds } : undefined });
  return addHeaders(jsonResponse(videoTaskView(task)), ledger.headers);
}

/** GET /v1/video/generations/{task_id}: the current status, refreshed from the upstream when due. */
export async function getVideo(context: RouteContext): Promise<Response> {
  const task = await findTask(context);
  return jsonResponse(videoTaskView(task));
}

/**
 * GET /v1/videos/{task_id}/content: the MP4, streamed from the upstream (never held whole), with
 * `Range` passed on so that players can seek (206). 409 until the task has completed.
 */
export async function getVideoContent(context: RouteContext): Promise<Response> {
  const task = await findTask(context);
  if (task.status !== 'completed') {
    throw new GatewayError({
      status: 409,
      message: `The video task ${task.id} is ${task.status}; its content can be downloaded once it has completed.`,
      code: 'video_not_ready',
    });
  }
  const content = await context.options.videoTasks.content(task, context.request.headers.get('range') ?? undefined, context.signal);
  return new Response(streamBody(content.body, context.serverContext), {
    status: content.status,
    headers: { 'content-type': 'video/mp4', 'accept-ranges': 'bytes', ...content.headers },
  });
}

/** A task of another key is as unknown as a missing one: its id reveals nothing. */
async function findTask({ options, params, key, signal }: RouteContext): Promise<VideoTaskRecord> {
  const id = params.task_id ?? '';
  const task = await options.taskStore.get(id);
  if (!task || task.keyId !== key.id) {
    throw new GatewayError({ status: 404, message: `No video task with id ${echo(id)}.`, param: 'task_id', code: 'task_not_found' });
  }
  return options.videoTasks.refresh(task, signal);
}

/** The spec's VideoTask (section 2.9); upstream ids, providers and their state stay inside. */
export function videoTaskView(task: VideoTaskRecord): Record<string, unknown> {
  return {
    id: task.id,
    task_id: task.id,
    object: 'video',
    model: task.model,
    status: task.status,
    progress: task.progress,
    created_at: task.createdAt,
    completed_at: task.completedAt,
    metadata: task.metadata,
    error: task.error,
  };
}
