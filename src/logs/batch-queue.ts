import type { Logger } from '../logger.js';
import { withoutUndefined, type Defaulted } from '../optional.js';
import type { SinkStats } from './request-log.js';

/** What a full queue does with one more item: drop it (and count it), or make its writer wait for room. */
export type OverflowPolicy = 'drop' | 'wait';

export interface BatchQueueOptions<T> {
  /** Named in log lines (`PostgresRequestLog`). */
  name: string;
  /** Writes one batch; a rejection is retried, the same batch again. */
  write: (batch: T[]) => Promise<void>;
  /** Most items held, the batch being written included. */
  capacity: number;
  /** A batch is written as soon as this many are waiting… */
  batchSize: number;
  /** …or this long after the oldest waiting one arrived, whichever comes first. */
  flushMs: number;
  /** Default `drop`. */
  overflow?: OverflowPolicy | undefined;
  /** Tries after a batch's first failure before its items are given up. Default 3. */
  retries?: number | undefined;
  /** Wait before the first retry, doubled for each next one. Default 250 ms. */
  retryDelayMs?: number | undefined;
  /**
   * An attempt that has not finished after this long counts as failed (and is retried), so a
   * storage that stopped answering cannot stall the queue for ever. Default 30 s.
   */
  timeoutMs?: number | undefined;
  logger: Logger;
  /** At most one "queue full" warning this often. Default 60 s. */
  warnIntervalMs?: number | undefined;
}

/**
 * A bounded queue that writes its items in batches, one batch at a time, in the order they came:
 * what keeps the request log's storage off the request's path. Memory stays within `capacity`
 * items: a full queue drops new items (`drop`, counted, one warning per interval) or holds their
 * writers until a batch is done (`wait`: back-pressure; the waiting items are their writers',
 * admitted in order). A failed batch is retried with backoff, then given up and counted.
 */
export class BatchQueue<T> {
  private readonly options: Defaulted<BatchQueueOptions<T>>;
  private readonly pending: T[] = [];
  private inFlight = 0;
  /** Writers waiting for room (`wait`), first come first admitted. */
  private readonly waiters: (() => void)[] = [];
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** The timer went off, or a flush was asked: write partial batches too. */
  private timeIsUp = false;
  private flushes = 0;
  private pumping: Promise<void> | undefined;
  private closed = false;
  /** A batch failed all its tries while closing: the rest are not tried. */
  private givenUpWhileClosing = false;
  /** Items ever admitted, and items written or given up: a flush waits for the second to reach the first. */
  private admitted = 0;
  private handled = 0;
  private readonly counts = { written: 0, dropped: 0, failedBatches: 0, failedRows: 0 };
  private lastWarning = Number.NEGATIVE_INFINITY;
  private readonly settledListeners = new Set<() => void>();

  constructor(options: BatchQueueOptions<T>) {
    const { name } = options;
    const positive = (value: number, what: string) => {
      if (!Number.isInteger(value) || value < 1) throw new TypeError(`${name}: ${what} must be a positive integer`);
    };
    positive(options.capacity, 'queueSize');
    positive(options.batchSize, 'batchSize');
    if (options.timeoutMs !== undefined) positive(options.timeoutMs, 'the write timeout');
    for (const [value, what] of [
      [options.retries, 'retries'],
      [options.retryDelayMs, 'retryDelayMs'],
    ] as const) {
      if (value !== undefined && (!Number.isInteger(value) || value < 0)) throw new TypeError(`${name}: ${what} must be an integer >= 0`);
    }
    if (options.batchSize > options.capacity) throw new TypeError(`${name}: batchSize must be at most queueSize`);
    if (!Number.isInteger(options.flushMs) || options.flushMs < 0) throw new TypeError(`${name}: flushMs must be an integer >= 0`);
    const overflow = options.overflow ?? 'drop';
    if (overflow !== 'drop' && overflow !== 'wait') throw new TypeError(`${name}: overflow must be "drop" or "wait"`);
    this.options = { ...options, retries: 3, retryDelayMs: 250, timeoutMs: 30_000, warnIntervalMs: 60_000, ...withoutUndefined(options), overflow };
  }

  /** Items held now (waiting or being written): never above `capacity`. */
  get size(): number {
    return this.pending.length + this.inFlight;
  }

  /** Queues one item; on a full queue, drops it or resolves once it is admitted. After `close`, drops. */
  push(item: T): void | Promise<void> {
    if (this.closed) return this.drop();
    if (this.waiters.length === 0 && this.size < this.options.capacity) return this.admit(item);
    if (this.options.overflow === 'drop') return this.drop();
    return new Promise((resolve) => this.waiters.push(() => resolve(this.admit(item))));
  }

  /** Resolves once every item pushed before the call is written or given up. */
  async flush(): Promise<void> {
    const target = this.admitted + this.waiters.length;
    this.flushes++;
    try {
      while (this.handled < target) {
        this.kick();
        await new Promise<void>((resolve) => this.settledListeners.add(resolve));
      }
    } finally {
      this.flushes--;
    }
  }

  /**
   * Drops what is pushed from now on, and writes what is held; once a batch fails all its tries,
   * what is left is given up (counted in `failedRows`) so a shutdown does not wait on a dead storage.
   */
  async close(): Promise<void> {
    this.closed = true;
    await this.flush();
    clearTimeout(this.timer);
  }

  stats(): SinkStats {
    return { ...this.counts, queued: this.size + this.waiters.length };
  }

  private admit(item: T): void {
    this.pending.push(item);
    this.admitted++;
    if (this.pending.length >= this.options.batchSize) this.kick();
    else this.startTimer();
  }

  private drop(): void {
    this.counts.dropped++;
    const now = Date.now();
    if (now - this.lastWarning >= this.options.warnIntervalMs) {
      this.lastWarning = now;
      this.options.logger.warn(`${this.options.name}: queue full, rows dropped`, { dropped: this.counts.dropped, queueSize: this.options.capacity });
    }
  }

  private startTimer(): void {
    if (this.timer !== undefined || this.timeIsUp) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.timeIsUp = true;
      this.kick();
    }, this.options.flushMs);
    this.timer.unref?.();
  }

  private kick(): void {
    this.pumping ??= this.pump().finally(() => {
      this.pumping = undefined;
      if (this.pending.length > 0 && (this.timeIsUp || this.flushes > 0 || this.pending.length >= this.options.batchSize)) this.kick();
      else if (this.pending.length > 0) this.startTimer();
      for (const listener of this.settledListeners) listener();
      this.settledListeners.clear();
    });
  }

  /** Writes batches while one is due: a full one, or any once the time is up or a flush waits. */
  private async pump(): Promise<void> {
    while (this.pending.length >= this.options.batchSize || (this.pending.length > 0 && (this.timeIsUp || this.flushes > 0))) {
      const batch = this.pending.splice(0, this.options.batchSize);
      if (this.pending.length === 0) this.timeIsUp = false;
      this.inFlight = batch.length;
      if (this.givenUpWhileClosing) this.giveUp(batch);
      else await this.writeWithRetries(batch);
      this.inFlight = 0;
      this.handled += batch.length;
      while (this.waiters.length > 0 && this.size < this.options.capacity) this.waiters.shift()!();
      for (const listener of this.settledListeners) listener();
      this.settledListeners.clear();
    }
  }

  /** One write, failed after `timeoutMs` (the write itself may still finish: a write must be idempotent). */
  private attempt(batch: T[]): Promise<void> {
    const write = this.options.write(batch);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${this.options.timeoutMs} ms`)), this.options.timeoutMs);
    });
    write.catch(() => {});
    return Promise.race([write, timeout]).finally(() => clearTimeout(timer));
  }

  /** Counts a batch as failed without trying it. */
  private giveUp(batch: T[]): void {
    this.counts.failedRows += batch.length;
    this.options.logger.error(`${this.options.name}: closing after a failed batch, rows given up unwritten`, { rows: batch.length });
  }

  private async writeWithRetries(batch: T[]): Promise<void> {
    const { retries, retryDelayMs, logger, name } = this.options;
    for (let attempt = 0; ; attempt++) {
      try {
        await this.attempt(batch);
        this.counts.written += batch.length;
        return;
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        if (attempt === 0) this.counts.failedBatches++;
        if (attempt >= retries) {
          this.counts.failedRows += batch.length;
          logger.error(`${name}: a batch failed ${attempt + 1} times, its rows are given up`, { rows: batch.length, message });
          // Closing with the storage down: the rest is given up at once rather than holding the shutdown.
          if (this.closed) this.givenUpWhileClosing = true;
          return;
        }
        logger.warn(`${name}: a batch failed, retrying`, { rows: batch.length, attempt: attempt + 1, message });
        await new Promise((resolve) => setTimeout(resolve, retryDelayMs * 2 ** attempt));
      }
    }
  }
}
