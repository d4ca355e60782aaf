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
  /**
   * Total size of the kept tasks (their JSON, in UTF-8 bytes) at most; beyond it the oldest go
   * first. A task is small (its `metadata` is bounded to 16 KiB of JSON), but its provider's
   * state is not the client's to bound. Default 64 MiB.
   */
  maxBytes?: number | undefined;
}

interface Entry {
  /** The task as JSON: `get` hands out a fresh copy, and the size bound counts what is held. */
  json: string;
  bytes: number;
  revision: number;
  final: boolean;
  id: string;
  writtenAt: number;
}

export class MemoryTaskStore implements TaskStore {
  /** In creation order, so the oldest are at the front. */
  private readonly tasks = new Map<string, Entry>();
  private readonly ttlMs: number;
  private readonly maxTasks: number;
  private readonly maxBytes: number;
  private bytes = 0;

  constructor(options: MemoryTaskStoreOptions = {}) {
    this.ttlMs = options.ttlMs ?? 7 * 24 * 3600 * 1000;
    this.maxTasks = options.maxTasks ?? 100_000;
    this.maxBytes = options.maxBytes ?? 64 * 1024 * 1024;
    if (!(this.ttlMs > 0)) throw new TypeError('MemoryTaskStore: ttlMs must be a positive number');
    for (const name of ['maxTasks', 'maxBytes'] as const) {
      if (!Number.isInteger(this[name]) || this[name] < 1) throw new TypeError(`MemoryTaskStore: ${name} must be a positive integer`);
    }
  }

  async get(id: string): Promise<VideoTaskRecord | undefined> {
    const entry = this.tasks.get(id);
    if (!entry || this.expired(entry, Date.now())) return undefined;
    return JSON.parse(entry.json) as VideoTaskRecord;
  }

  async create(task: VideoTaskRecord): Promise<void> {
    if (this.tasks.has(task.id)) throw new Error(`A task with id ${task.id} exists already`);
    this.store(task);
  }

  async update(task: VideoTaskRecord): Promise<boolean> {
    const stored = this.tasks.get(task.id);
    if (!stored || stored.revision !== task.revision - 1) return false;
    this.store(task);
    return true;
  }

  /** Keeps the task's JSON (a new task at the back, a rewritten one in its place), then evicts. */
  private store(task: VideoTaskRecord): void {
    const json = JSON.stringify(task);
    const bytes = Buffer.byteLength(json);
    if (bytes > this.maxBytes) throw new RangeError(`MemoryTaskStore: task ${task.id} (${bytes} bytes) is larger than maxBytes`);
    const previous = this.tasks.get(task.id);
    if (previous) this.bytes -= previous.bytes;
    this.tasks.set(task.id, { json, bytes, revision: task.revision, final: isFinal(task.status), id: task.id, writtenAt: Date.now() });
    this.bytes += bytes;
    this.evict(Date.now(), task.id);
  }

  /**
   * Drops expired tasks from the front, and the oldest while over `maxTasks` or `maxBytes` (never
   * the one just written): memory stays bounded.
   */
  private evict(now: number, written: string): void {
    for (const [id, entry] of this.tasks) {
      if (this.tasks.size <= this.maxTasks && this.bytes <= this.maxBytes && !this.expired(entry, now)) break;
      if (id === written) continue;
      this.tasks.delete(id);
      this.bytes -= entry.bytes;
    }
  }

  private expired(entry: { writtenAt: number }, now: number): boolean {
    return now - entry.writtenAt > this.ttlMs;
  }

  async pending(limit: number): Promise<string[]> {
    const ids: string[] = [];
    // A Map iterates in insertion order: oldest first.
    for (const entry of this.tasks.values()) {
      if (ids.length >= limit) break;
      if (!entry.final) ids.push(entry.id);
    }
    return ids;
  }
}
