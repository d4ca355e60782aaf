/** Status words of the spec's VideoTask (section 2.9). */
export type TaskStatus = 'unknown' | 'queued' | 'in_progress' | 'completed' | 'failed';

/**
 * A video task as the gateway keeps it. The upstream id and provider name stay inside the
 * gateway; clients only ever see `id`.
 */
export interface VideoTaskRecord {
  /** Gateway-issued id (`video_…`). */
  id: string;
  /** Id of the key that created it: another key gets 404. */
  keyId: string;
  /** Public model id. */
  model: string;
  provider: string;
  upstreamId?: string;
  status: TaskStatus;
  progress: number;
  createdAt: number;
  completedAt?: number;
  metadata?: Record<string, unknown>;
  error?: { message: string; type?: string; code?: string | null };
  /** When the status was last refreshed from the upstream (ms since epoch). */
  refreshedAt?: number;
}

/** Where video tasks live; several gateway instances share one store to share tasks. */
export interface TaskStore {
  get(id: string): Promise<VideoTaskRecord | undefined>;
  put(task: VideoTaskRecord): Promise<void>;
  close?(): Promise<void>;
}

/** The default store: one process, lost on restart. */
export class MemoryTaskStore implements TaskStore {
  private readonly tasks = new Map<string, VideoTaskRecord>();

  async get(id: string): Promise<VideoTaskRecord | undefined> {
    const task = this.tasks.get(id);
    return task ? structuredClone(task) : undefined;
  }

  async put(task: VideoTaskRecord): Promise<void> {
    this.tasks.set(task.id, structuredClone(task));
  }
}
