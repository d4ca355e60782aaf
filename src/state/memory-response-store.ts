import type { ResponseStore, StoredResponse } from './response-store.js';

export interface MemoryResponseStoreOptions {
  /** Responses kept at most; the oldest are dropped first. Default 10,000. */
  maxResponses?: number;
  /**
   * Total size of the kept responses (their JSON, in UTF-8 bytes) at most; the oldest are dropped
   * first. Each response holds its whole conversation, so long conversations weigh more than
   * their count says. Default 256 MiB.
   */
  maxBytes?: number;
  /** How long a response can be continued after it was stored, in ms. Default 30 days. */
  ttlMs?: number;
}

interface Entry {
  json: string;
  bytes: number;
  expiresAt: number;
}

/**
 * Responses in this process's memory, bounded by count, size and age (the default store when a
 * model accepts `previous_response_id`). Each is kept as its JSON text: `get` hands out a fresh
 * copy, as the Redis store does, and the size bound counts what is really held. A restart loses
 * them all; several instances share `RedisResponseStore` from `infergate/redis` instead.
 */
export class MemoryResponseStore implements ResponseStore {
  private readonly entries = new Map<string, Entry>();
  private readonly maxResponses: number;
  private readonly maxBytes: number;
  private readonly ttlMs: number;
  private bytes = 0;

  constructor(options: MemoryResponseStoreOptions = {}) {
    this.maxResponses = options.maxResponses ?? 10_000;
    this.maxBytes = options.maxBytes ?? 256 * 1024 * 1024;
    this.ttlMs = options.ttlMs ?? 30 * 24 * 3600 * 1000;
    for (const name of ['maxResponses', 'maxBytes', 'ttlMs'] as const) {
      if (!Number.isInteger(this[name]) || this[name] < 1) throw new TypeError(`MemoryResponseStore: ${name} must be a positive integer`);
    }
  }

  async get(id: string): Promise<StoredResponse | undefined> {
    const entry = this.entries.get(id);
    if (!entry) return undefined;
    if (entry.expiresAt <= Date.now()) {
      this.remove(id, entry);
      return undefined;
    }
    return JSON.parse(entry.json) as StoredResponse;
  }

  /** Stored at once (before the promise settles), so a `get` right after finds it. */
  async put(response: StoredResponse): Promise<void> {
    const json = JSON.stringify(response);
    const bytes = Buffer.byteLength(json);
    if (bytes > this.maxBytes) throw new RangeError(`MemoryResponseStore: response ${response.id} (${bytes} bytes) is larger than maxBytes`);
    const previous = this.entries.get(response.id);
    if (previous) this.remove(response.id, previous);
    this.entries.set(response.id, { json, bytes, expiresAt: Date.now() + this.ttlMs });
    this.bytes += bytes;
    this.evict();
  }

  /**
   * Drops expired responses and then the oldest until the bounds hold. Entries are in insertion
   * order and share one TTL, so the expired ones are all at the front.
   */
  private evict(): void {
    const now = Date.now();
    for (const [id, entry] of this.entries) {
      if (entry.expiresAt > now && this.entries.size <= this.maxResponses && this.bytes <= this.maxBytes) break;
      this.remove(id, entry);
    }
  }

  private remove(id: string, entry: Entry): void {
    this.entries.delete(id);
    this.bytes -= entry.bytes;
  }
}
