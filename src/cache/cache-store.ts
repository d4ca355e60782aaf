/**
 * Where the response cache keeps answers: serialized entries under opaque keys (the caller's key
 * id and a hash of the request), each with its own expiry. The memory store serves one process;
 * `RedisCacheStore` from `infergate/redis` shares the cache between instances.
 */
export interface ResponseCacheStore {
  /** The entry stored under `key`, or undefined when there is none or it expired. */
  get(key: string): Promise<string | undefined> | string | undefined;
  /** Stores `value` under `key` for `ttlMs` milliseconds, replacing what was there. */
  set(key: string, value: string, ttlMs: number): Promise<void> | void;
  close?(): Promise<void>;
}
