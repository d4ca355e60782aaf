import { afterEach, describe, expect, it, vi } from 'vitest';
import { BatchQueue, type BatchQueueOptions } from '../../src/logs/batch-queue.js';
import { recordingLogger } from '../helpers/recording-logger.js';

/** A write the test finishes by hand, recording each batch and how many writes ran at once. */
function manualWriter() {
  const batches: number[][] = [];
  const waiting: { resolve: () => void; reject: (error: Error) => void }[] = [];
  let running = 0;
  let mostAtOnce = 0;
  return {
    batches,
    get mostAtOnce() {
      return mostAtOnce;
    },
    get waiting() {
      return waiting.length;
    },
    write: (batch: number[]) => {
      batches.push([...batch]);
      running++;
      mostAtOnce = Math.max(mostAtOnce, running);
      return new Promise<void>((resolve, reject) => waiting.push({ resolve, reject })).finally(() => running--);
    },
    finish: () => waiting.shift()!.resolve(),
    fail: () => waiting.shift()!.reject(new Error('database down')),
  };
}

function queue(options: Partial<BatchQueueOptions<number>> & Pick<BatchQueueOptions<number>, 'write'>) {
  const { logger, lines } = recordingLogger();
  const built = new BatchQueue<number>({ name: 'TestLog', capacity: 100, batchSize: 3, flushMs: 60_000, retryDelayMs: 1, logger, ...options });
  return { queue: built, lines };
}

/** Lets promise callbacks and zero-delay work run. */
const tick = () => new Promise((resolve) => setImmediate(resolve));

const until = async (condition: () => boolean) => {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 1));
};

afterEach(() => {
  vi.useRealTimers();
});

describe('BatchQueue', () => {
  it('writes a batch as soon as batchSize items wait', async () => {
    const writer = manualWriter();
    const { queue: q } = queue({ write: writer.write });
    q.push(1);
    q.push(2);
    await tick();
    expect(writer.batches).toEqual([]);
    q.push(3);
    await tick();
    expect(writer.batches).toEqual([[1, 2, 3]]);
  });

  it('writes a partial batch flushMs after its oldest item arrived', async () => {
    vi.useFakeTimers();
    const batches: number[][] = [];
    const { queue: q } = queue({ write: async (batch) => void batches.push(batch), flushMs: 1000 });
    q.push(1);
    await vi.advanceTimersByTimeAsync(500);
    q.push(2);
    await vi.advanceTimersByTimeAsync(499);
    expect(batches).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(batches).toEqual([[1, 2]]);
    expect(q.stats()).toEqual({ written: 2, queued: 0, dropped: 0, failedBatches: 0, failedRows: 0 });
  });

  it('writes one batch at a time, every item once, in order', async () => {
    const writer = manualWriter();
    const { queue: q } = queue({ write: writer.write });
    for (let n = 1; n <= 10; n++) q.push(n);
    await tick();
    expect(writer.batches).toEqual([[1, 2, 3]]);
    const flushed = q.flush();
    while (writer.waiting > 0) {
      writer.finish();
      await tick();
    }
    await flushed;
    expect(writer.batches).toEqual([[1, 2, 3], [4, 5, 6], [7, 8, 9], [10]]);
    expect(writer.mostAtOnce).toBe(1);
    expect(q.stats().written).toBe(10);
  });

  it('drop: a full queue drops new items, counts them and warns once per interval', async () => {
    const writer = manualWriter();
    const { queue: q, lines } = queue({ write: writer.write, capacity: 4, batchSize: 2 });
    const results = Array.from({ length: 10 }, (_, n) => q.push(n + 1));
    expect(results.every((result) => result === undefined)).toBe(true);
    expect(q.size).toBe(4);
    expect(q.stats()).toMatchObject({ queued: 4, dropped: 6 });
    expect(lines.filter((line) => line.message === 'TestLog: queue full, rows dropped')).toHaveLength(1);
    const flushed = q.flush();
    while (writer.waiting > 0) {
      writer.finish();
      await tick();
    }
    await flushed;
    expect(writer.batches).toEqual([
      [1, 2],
      [3, 4],
    ]);
    expect(q.stats()).toEqual({ written: 4, queued: 0, dropped: 6, failedBatches: 0, failedRows: 0 });
  });

  it('wait: a full queue holds its writers until there is room, never above capacity, in order', async () => {
    const writer = manualWriter();
    const { queue: q } = queue({ write: writer.write, capacity: 4, batchSize: 2, overflow: 'wait' });
    let admitted = 0;
    let largest = 0;
    const pushes = Array.from({ length: 10 }, (_, n) => {
      const result = q.push(n + 1);
      largest = Math.max(largest, q.size);
      return Promise.resolve(result).then(() => {
        admitted++;
        largest = Math.max(largest, q.size);
      });
    });
    await tick();
    expect(admitted).toBe(4);
    expect(q.stats()).toMatchObject({ queued: 10, dropped: 0 });
    writer.finish(); // [1, 2] written: room for two
    await tick();
    expect(admitted).toBe(6);
    while (writer.waiting > 0) {
      writer.finish();
      await tick();
    }
    await Promise.all(pushes);
    await q.flush();
    expect(writer.batches.flat()).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(largest).toBe(4);
    expect(q.stats()).toEqual({ written: 10, queued: 0, dropped: 0, failedBatches: 0, failedRows: 0 });
  });

  it('retries a failed batch, the same items, then writes it', async () => {
    const writer = manualWriter();
    const { queue: q } = queue({ write: writer.write, retries: 3 });
    q.push(1);
    q.push(2);
    q.push(3);
    await tick();
    writer.fail();
    await until(() => writer.waiting > 0);
    writer.fail();
    await until(() => writer.waiting > 0);
    writer.finish();
    await q.flush();
    expect(writer.batches).toEqual([
      [1, 2, 3],
      [1, 2, 3],
      [1, 2, 3],
    ]);
    expect(q.stats()).toEqual({ written: 3, queued: 0, dropped: 0, failedBatches: 1, failedRows: 0 });
  });

  it('gives a batch up after its retries, logs it, and goes on with the next', async () => {
    let calls = 0;
    const written: number[][] = [];
    const { queue: q, lines } = queue({
      retries: 2,
      write: async (batch) => {
        calls++;
        if (batch[0] === 1) throw new Error('database down');
        written.push(batch);
      },
    });
    for (let n = 1; n <= 6; n++) q.push(n);
    await q.flush();
    expect(calls).toBe(4);
    expect(written).toEqual([[4, 5, 6]]);
    expect(q.stats()).toEqual({ written: 3, queued: 0, dropped: 0, failedBatches: 1, failedRows: 3 });
    expect(lines.filter((line) => line.level === 'error')).toEqual([
      { level: 'error', message: 'TestLog: a batch failed 3 times, its rows are given up', fields: { rows: 3, message: 'database down' } },
    ]);
  });

  it('an attempt without an answer within timeoutMs counts as failed and is retried', async () => {
    const batches: number[][] = [];
    // The first three attempts never answer, the fourth does.
    const write = (batch: number[]) => (batches.push(batch) <= 3 ? new Promise<void>(() => {}) : Promise.resolve());
    const { queue: q } = queue({ write, timeoutMs: 5, retries: 1 });
    for (let n = 1; n <= 6; n++) q.push(n);
    await q.flush();
    expect(batches).toEqual([
      [1, 2, 3],
      [1, 2, 3],
      [4, 5, 6],
      [4, 5, 6],
    ]);
    expect(q.stats()).toEqual({ written: 3, queued: 0, dropped: 0, failedBatches: 2, failedRows: 3 });
  });

  it('flush writes partial batches at once; close drains, then drops what comes after', async () => {
    const batches: number[][] = [];
    const { queue: q } = queue({ write: async (batch) => void batches.push(batch), batchSize: 5 });
    q.push(1);
    q.push(2);
    await q.flush();
    expect(batches).toEqual([[1, 2]]);
    q.push(3);
    await q.close();
    expect(batches).toEqual([[1, 2], [3]]);
    q.push(4);
    await q.flush();
    expect(batches).toEqual([[1, 2], [3]]);
    expect(q.stats()).toMatchObject({ written: 3, dropped: 1 });
  });

  it('close: once a batch fails all its tries, the rest are given up without being tried', async () => {
    let calls = 0;
    const { queue: q, lines } = queue({
      retries: 1,
      batchSize: 2,
      write: async () => {
        calls++;
        throw new Error('database down');
      },
    });
    for (let n = 1; n <= 10; n++) q.push(n);
    await q.close();
    expect(calls).toBe(2);
    expect(q.stats()).toEqual({ written: 0, queued: 0, dropped: 0, failedBatches: 1, failedRows: 10 });
    expect(lines.filter((line) => line.message === 'TestLog: closing after a failed batch, rows given up unwritten')).toHaveLength(4);
  });

  it('validates its settings', () => {
    const write = async () => {};
    expect(() => queue({ write, capacity: 2, batchSize: 3 })).toThrow('TestLog: batchSize must be at most queueSize');
    expect(() => queue({ write, capacity: 0 })).toThrow('TestLog: queueSize must be a positive integer');
    expect(() => queue({ write, overflow: 'block' as 'wait' })).toThrow('TestLog: overflow must be "drop" or "wait"');
    expect(() => queue({ write, timeoutMs: 0 })).toThrow('TestLog: the write timeout must be a positive integer');
    expect(() => queue({ write, retries: -1 })).toThrow('TestLog: retries must be an integer >= 0');
  });
});
