import { GatewayError, isAbortError, isGatewayError } from '../errors.js';
import { newId, unixSeconds } from '../ids.js';
import type { Logger } from '../logger.js';
import type { TaskCallContext, VideoContent, VideoJob, VideoJobStatus, VideoRequest } from '../providers/media.js';
import type { CallContext, Provider } from '../providers/provider.js';
import type { ModelCatalog } from '../routing/catalog.js';
import type { ModelEntry } from '../routing/model.js';
import { isFinal, type TaskStatus, type TaskStore, type VideoTaskRecord } from './task-store.js';

export interface VideoTasksOptions {
  store: TaskStore;
  providers: Record<string, Provider>;
  catalog: ModelCatalog;
  logger: Logger;
  /** Minimum time between two upstream refreshes of one task, in ms. */
  refreshIntervalMs: number;
  /** The gateway's `limits.streamIdleTimeoutMs`, handed to providers with each call. */
  idleTimeoutMs?: number;
  /** Clock in ms, for tests. */
  now?: () => number;
}

/** How far along each status is: a task only ever moves to a higher rank. */
const RANK: Record<TaskStatus, number> = { unknown: 0, queued: 1, in_progress: 2, completed: 3, failed: 3 };

/** Attempts at a compare-and-set write before giving up on a busy task. */
const WRITE_ATTEMPTS = 5;

/**
 * The video task lifecycle: submit to the provider and store; refresh the status from the
 * upstream on read, at most once per `refreshIntervalMs` per task (across instances sharing the
 * store: the refresh is claimed with a compare-and-set write first); merge what the upstream says
 * so that a task never goes backwards (status rank, progress); stream the finished content; and
 * an optional background poller that refreshes unfinished tasks.
 */
export class VideoTasks {
  private readonly now: () => number;
  private poller: ReturnType<typeof setInterval> | undefined;
  private polling: Promise<void> | undefined;
  private readonly stopPolling = new AbortController();

  constructor(private readonly options: VideoTasksOptions) {
    this.now = options.now ?? Date.now;
  }

  /** Submits the task upstream and stores it as `queued`. */
  async create(provider: Provider, request: VideoRequest, call: CallContext): Promise<VideoTaskRecord> {
    const job = await provider.video!.create(request, call);
    const task: VideoTaskRecord = {
      id: newId('video_'),
      keyId: call.key.id,
      model: call.model.id,
      provider: call.model.provider,
      upstreamId: job.id,
      ...(job.state ? { upstreamState: job.state } : {}),
      status: 'queued',
      progress: 0,
      createdAt: unixSeconds(),
      ...(request.metadata ? { metadata: request.metadata } : {}),
      refreshedAt: this.now(),
      revision: 0,
    };
    await this.options.store.create(task);
    return task;
  }

  /** The stored task, refreshed from the upstream when due. */
  async get(id: string, signal: AbortSignal): Promise<VideoTaskRecord | undefined> {
    const task = await this.options.store.get(id);
    return task ? this.refresh(task, signal) : undefined;
  }

  /**
   * Asks the upstream for news when the task is not final and was not refreshed within the
   * interval. An upstream failure leaves the task as it was (it is logged); an upstream that no
   * longer knows the task (404) fails it.
   */
  async refresh(task: VideoTaskRecord, signal: AbortSignal): Promise<VideoTaskRecord> {
    if (isFinal(task.status)) return task;
    const now = this.now();
    if (task.refreshedAt !== undefined && now - task.refreshedAt < this.options.refreshIntervalMs) return task;
    const provider = this.options.providers[task.provider];
    if (!provider?.video) return task;

    // Claim this refresh: whoever else read the same revision now leaves it to us.
    const claimed: VideoTaskRecord = { ...task, refreshedAt: now, revision: task.revision + 1 };
    if (!(await this.options.store.update(claimed))) return (await this.options.store.get(task.id)) ?? task;

    let status: VideoJobStatus;
    try {
      status = await provider.video.get(jobOf(claimed), this.callContext(claimed, signal));
    } catch (error) {
      if (isAbortError(error)) throw error;
      if (isGatewayError(error) && error.status === 404) {
        status = { status: 'failed', error: { message: 'The upstream no longer knows this video task.', code: 'upstream_task_not_found' } };
      } else {
        this.options.logger.warn('video task refresh failed', { taskId: task.id, message: error instanceof Error ? error.message : String(error) });
        return claimed;
      }
    }
    return this.apply(claimed, status);
  }

  /** The finished video from the provider (the caller checked the task is completed). */
  async content(task: VideoTaskRecord, range: string | undefined, signal: AbortSignal): Promise<VideoContent> {
    const provider = this.options.providers[task.provider];
    if (!provider?.video) {
      throw new GatewayError({
        status: 501,
        type: 'not_implemented',
        message: `Video download is not available for the model \`${task.model}\`.`,
        code: 'not_implemented',
      });
    }
    return provider.video.content(jobOf(task), { range }, this.callContext(task, signal));
  }

  /**
   * Refreshes unfinished tasks every `intervalMs`, `batchSize` at a time (oldest first). Timers
   * are unref'd: the poller never keeps a process alive. `stop()` ends it.
   */
  startPoller(intervalMs: number, batchSize: number): void {
    if (this.poller) return;
    this.poller = setInterval(() => {
      this.polling ??= this.pollOnce(batchSize).finally(() => {
        this.polling = undefined;
      });
    }, intervalMs);
    this.poller.unref?.();
  }

  /** One round of the poller; exported for tests. */
  async pollOnce(batchSize: number): Promise<void> {
    try {
      const ids = await this.options.store.pending(batchSize);
      for (const id of ids) {
        if (this.stopPolling.signal.aborted) return;
        const task = await this.options.store.get(id);
        if (task) await this.refresh(task, this.stopPolling.signal);
      }
    } catch (error) {
      if (!isAbortError(error)) this.options.logger.warn('video poller failed', { message: error instanceof Error ? error.message : String(error) });
    }
  }

  async stop(): Promise<void> {
    if (this.poller) clearInterval(this.poller);
    this.poller = undefined;
    this.stopPolling.abort();
    await this.polling;
  }

  /** Merges an upstream status into the stored task with compare-and-set, retrying on conflicts. */
  private async apply(task: VideoTaskRecord, status: VideoJobStatus): Promise<VideoTaskRecord> {
    let current = task;
    for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
      const next = advance(current, status, this.now());
      if (next === current) return current;
      const written = { ...next, revision: current.revision + 1 };
      if (await this.options.store.update(written)) return written;
      const fresh = await this.options.store.get(task.id);
      if (!fresh) return written;
      current = fresh;
    }
    return current;
  }

  private callContext(task: VideoTaskRecord, signal: AbortSignal): TaskCallContext {
    // The task stays with the deployment that took it, whatever the catalog says now.
    const entry = this.options.catalog.get(task.model);
    const model: ModelEntry = entry ? { ...entry, provider: task.provider } : { id: task.model, provider: task.provider, kind: 'video' };
    return { signal, model, idleTimeoutMs: this.options.idleTimeoutMs };
  }
}

/**
 * The task after an upstream status, never going backwards: the status only moves to a higher
 * rank (`unknown` → `queued` → `in_progress` → `completed` | `failed`), a final task does not
 * change, and progress only grows (100 once completed). Returns `task` itself when nothing
 * changes.
 */
export function advance(task: VideoTaskRecord, update: VideoJobStatus, nowMs: number): VideoTaskRecord {
  if (isFinal(task.status)) return task;
  const next: VideoTaskRecord = { ...task };
  if (RANK[update.status] > RANK[task.status]) next.status = update.status;
  if (update.progress !== undefined && Number.isFinite(update.progress)) {
    next.progress = Math.max(task.progress, Math.min(100, Math.max(0, Math.round(update.progress))));
  }
  if (next.status === 'completed') {
    next.progress = 100;
    next.completedAt = update.completedAt ?? Math.floor(nowMs / 1000);
  } else if (next.status === 'failed') {
    next.error = update.error ?? { message: 'The video generation failed.', code: 'video_generation_failed' };
  } else if (next.progress === 100) {
    // Only a completed task shows 100.
    next.progress = 99;
  }
  if (update.state && JSON.stringify(update.state) !== JSON.stringify(task.upstreamState)) next.upstreamState = update.state;
  const changed =
    next.status !== task.status ||
    next.progress !== task.progress ||
    next.upstreamState !== task.upstreamState ||
    next.error !== task.error ||
    next.completedAt !== task.completedAt;
  return changed ? next : task;
}

function jobOf(task: VideoTaskRecord): VideoJob {
  return { id: task.upstreamId, state: task.upstreamState };
}
