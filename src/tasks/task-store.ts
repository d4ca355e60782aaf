/** Status words of the spec's VideoTask (section 2.9). */
export type TaskStatus = 'unknown' | 'queued' | 'in_progress' | 'completed' | 'failed';

/**
 * A video task as the gateway keeps it. The upstream id, provider name and provider state stay
 * inside the gateway; clients only ever see `id`.
 */
export interface VideoTaskRecord {
  /** Gateway-issued id (`video_…`). */
  id: string;
  /** Id of the key that created it: another key gets 404. */
  keyId: string;
  /** Public model id. */
  model: string;
  /** Name of the provider in the gateway's `providers`. */
  provider: string;
  upstreamId: string;
  /** Provider-private data (`VideoJob.state`), JSON only. */
  upstreamState?: Record<string, unknown>;
  status: TaskStatus;
  /** Integer 0–100. */
  progress: number;
  /** Unix seconds. */
  createdAt: number;
  completedAt?: number;
  /** The request's `metadata`, echoed in the VideoTask. */
  metadata?: Record<string, unknown>;
  error?: { message: string; type?: string; code?: string | null };
  /** When the status was last refreshed from the upstream (ms since epoch). */
  refreshedAt?: number;
  /** Bumped by every write; `update` only succeeds on the revision it read (compare and set). */
  revision: number;
}

/** `completed` and `failed` are final: a final task is never refreshed nor polled again. */
export function isFinal(status: TaskStatus): boolean {
  return status === 'completed' || status === 'failed';
}

/**
 * Where video tasks live. Several gateway instances share one store to share tasks (see
 * `infergate/redis`). Writes are compare-and-set on `revision`, so two instances refreshing the
 * same task cannot overwrite a newer status with an older one.
 */
export interface TaskStore {
  get(id: string): Promise<VideoTaskRecord | undefined>;
  /** Stores a new task (its `revision` is 0); throws if the id exists. */
  create(task: VideoTaskRecord): Promise<void>;
  /**
   * Replaces the task only if the stored one still has revision `task.revision - 1`; returns
   * false (and writes nothing) when another writer got there first or the task is gone.
   */
  update(task: VideoTaskRecord): Promise<boolean>;
  /** Ids of up to `limit` tasks that are not final, oldest first: the background poller's work. */
  pending(limit: number): Promise<string[]>;
  close?(): Promise<void>;
}

/** The default store: one process, lost on restart. */
export class MemoryTaskStore implements TaskStore {
  private readonly tasks = new Map<string, VideoTaskRecord>();

  async get(id: string): Promise<VideoTaskRecord | undefined> {
    const task = this.tasks.get(id);
    return task ? structuredClone(task) : undefined;
  }

  async create(task: VideoTaskRecord): Promise<void> {
    if (this.tasks.has(task.id)) throw new Error(`A task with id ${task.id} exists already`);
    this.tasks.set(task.id, structuredClone(task));
  }

  async update(task: VideoTaskRecord): Promise<boolean> {
    const stored = this.tasks.get(task.id);
    if (!stored || stored.revision !== task.revision - 1) return false;
    this.tasks.set(task.id, structuredClone(task));
    return true;
  }

  async pending(limit: number): Promise<string[]> {
    const ids: string[] = [];
    // A Map iterates in insertion order: oldest first.
    for (const task of this.tasks.values()) {
      if (ids.length >= limit) break;
      if (!isFinal(task.status)) ids.push(task.id);
    }
    return ids;
  }
}
