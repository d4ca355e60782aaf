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
  upstreamState?: Record<string, unknown> | undefined;
  status: TaskStatus;
  /** Integer 0–100. */
  progress: number;
  /** Unix seconds. */
  createdAt: number;
  completedAt?: number | undefined;
  /** The request's `metadata`, echoed in the VideoTask. */
  metadata?: Record<string, unknown> | undefined;
  error?: { message: string; type?: string | undefined; code?: string | null | undefined } | undefined;
  /** When the status was last refreshed from the upstream (ms since epoch). */
  refreshedAt?: number | undefined;
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
export interface MemoryTaskStoreOptions {
  /** How long a task is kept after its last write, in ms. Default 7 days, as `RedisTaskStore`. */
  ttlMs?: number | undefined;
  /** Most tasks kept; beyond it the oldest go first. Default 100,000. */
  maxTasks?: number | undefined;
}

export class MemoryTaskStore implements TaskStore {
  /** In creation order, so the oldest are at the front. */
  private readonly tasks = new Map<string, { task: VideoTaskRecord; writtenAt: number }>();
  private readonly ttlMs: number;
  private readonly maxTasks: number;

  constructor(options: MemoryTaskStoreOptions = {}) {
    this.ttlMs = options.ttlMs ?? 7 * 24 * 3600 * 1000;
    this.maxTasks = options.maxTasks ?? 100_000;
    if (!(this.ttlMs > 0)) throw new TypeError('MemoryTaskStore: ttlMs must be a positive number');
    if (!Number.isInteger(this.maxTasks) || this.maxTasks < 1) throw new TypeError('MemoryTaskStore: maxTasks must be a positive integer');
  }

  async get(id: string): Promise<VideoTaskRecord | undefined> {
    const entry = this.tasks.get(id);
    if (!entry || this.expired(entry, Date.now())) return undefined;
    return structuredClone(entry.task);
  }

  async create(task: VideoTaskRecord): Promise<void> {
    if (this.tasks.has(task.id)) throw new Error(`A task with id ${task.id} exists already`);
    this.evict(Date.now());
    this.tasks.set(task.id, { task: structuredClone(task), writtenAt: Date.now() });
  }

  async update(task: VideoTaskRecord): Promise<boolean> {
    const stored = this.tasks.get(task.id);
    if (!stored || stored.task.revision !== task.revision - 1) return false;
    stored.task = structuredClone(task);
    stored.writtenAt = Date.now();
    return true;
  }

  /** Drops expired tasks from the front, and the oldest while over `maxTasks`: memory stays bounded. */
  private evict(now: number): void {
    for (const [id, entry] of this.tasks) {
      if (this.tasks.size < this.maxTasks && !this.expired(entry, now)) break;
      this.tasks.delete(id);
    }
  }

  private expired(entry: { writtenAt: number }, now: number): boolean {
    return now - entry.writtenAt > this.ttlMs;
  }

  async pending(limit: number): Promise<string[]> {
    const ids: string[] = [];
    // A Map iterates in insertion order: oldest first.
    for (const { task } of this.tasks.values()) {
      if (ids.length >= limit) break;
      if (!isFinal(task.status)) ids.push(task.id);
    }
    return ids;
  }
}
