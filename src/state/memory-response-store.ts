import { itemsWithIds, type ResponseStore, type StoredResponse } from './response-store.js';

export interface MemoryResponseStoreOptions {
  /** Responses kept at most; the oldest are dropped first. Default 10,000. */
  maxResponses?: number | undefined;
  /**
   * Total size of the kept responses (their JSON, in UTF-8 bytes) at most; the oldest are dropped
   * first. Each response holds its whole conversation, so long conversations weigh more than
   * their count says. Default 256 MiB.
   */
  maxBytes?: number | undefined;
  /** How long a response can be continued after it was stored, in ms. Default 30 days. */
  ttlMs?: number | undefined;
}

interface Entry {
  json: string;
  bytes: number;
  expiresAt: number;
  /** Its keys in the item index, to drop with it. */
  itemKeys: string[];
}

/**
 * Responses in this process's memory, bounded by count, size and age (the default store when a
 * model accepts `previous_response_id`). Each is kept as its JSON text: `get` hands out a fresh
 * copy, as the Redis store does, and the size bound counts what is really held. A restart loses
 * them all; several instances share `RedisResponseStore` from `infergate/redis` instead.
 *
 * Items are found through an index from (key, item id) to the newest response holding the item
 * (each response holds its whole conversation, so that is the one kept longest); an entry goes
 * with its response. It costs a few dozen bytes per item, not counted in `maxBytes`.
 */
export class MemoryResponseStore implements ResponseStore {
  private readonly entries = new Map<string, Entry>();
  /** `itemKey(keyId, itemId)` → id of the newest response holding that item. */
  private readonly items = new Map<string, string>();
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
    const itemKeys = itemsWithIds(response.items).map(([itemId]) => itemKey(response.keyId, itemId));
    for (const key of itemKeys) this.items.set(key, response.id);
    this.entries.set(response.id, { json, bytes, expiresAt: Date.now() + this.ttlMs, itemKeys });
    this.bytes += bytes;
    this.evict();
  }

  async delete(id: string): Promise<boolean> {
    const entry = this.entries.get(id);
    if (!entry) return false;
    this.remove(id, entry);
    return entry.expiresAt > Date.now();
  }

  /** Each response holding asked items is parsed once: usually all are in the newest one. */
  async getItems(keyId: string, ids: string[]): Promise<(unknown | undefined)[]> {
    const parsed = new Map<string, Map<string, unknown> | undefined>();
    const found: (unknown | undefined)[] = [];
    for (const id of ids) {
      const responseId = this.items.get(itemKey(keyId, id));
      if (responseId === undefined) {
        found.push(undefined);
        continue;
      }
      if (!parsed.has(responseId)) {
        const response = await this.get(responseId);
        parsed.set(responseId, response && response.keyId === keyId ? new Map(itemsWithIds(response.items)) : undefined);
      }
      found.push(parsed.get(responseId)?.get(id));
    }
    return found;
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
    // An item a newer response also holds now points there, and stays.
    for (const key of entry.itemKeys) if (this.items.get(key) === id) this.items.delete(key);
  }
}

/** Unambiguous whatever the two ids contain. */
function itemKey(keyId: string, itemId: string): string {
  return JSON.stringify([keyId, itemId]);
}
