import type { Logger } from '../logger.js';
import type { ResolvedResponseCache } from './response-cache-options.js';

/**
 * The response cache over its store. The cache never fails a request: a store that cannot be
 * read is a miss, one that cannot be written is logged, an entry over `maxEntryBytes` is not
 * kept. Entries are serialized by their kind (`cached-answer.ts`, `embedding-cache.ts`).
 */
export class ResponseCache {
  constructor(
    readonly settings: ResolvedResponseCache,
    private readonly logger: Logger,
  ) {}

  async get(key: string, requestId: string): Promise<string | undefined> {
    try {
      return (await this.settings.store.get(key)) ?? undefined;
    } catch (error) {
      this.logger.warn('response cache read failed', { requestId, message: error instanceof Error ? error.message : String(error) });
      return undefined;
    }
  }

  set(key: string, entry: string, requestId: string): void {
    if (Buffer.byteLength(entry) > this.settings.maxEntryBytes) return;
    Promise.resolve()
      .then(() => this.settings.store.set(key, entry, this.settings.ttlMs))
      .catch((error: unknown) =>
        this.logger.warn('response cache write failed', { requestId, message: error instanceof Error ? error.message : String(error) }),
      );
  }
}
