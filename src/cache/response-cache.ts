import type { Logger } from '../logger.js';
import type { IRResponse } from '../protocols/ir.js';
import { parseAnswer, serializeAnswer } from './cached-answer.js';
import type { ResolvedResponseCache } from './response-cache-options.js';

/**
 * The response cache over its store. The cache never fails a request: a store that cannot be
 * read is a miss, one that cannot be written is logged, an answer over `maxEntryBytes` is
 * not kept.
 */
export class ResponseCache {
  constructor(
    readonly settings: ResolvedResponseCache,
    private readonly logger: Logger,
  ) {}

  async get(key: string, requestId: string): Promise<IRResponse | undefined> {
    try {
      const text = await this.settings.store.get(key);
      return text === undefined ? undefined : parseAnswer(text);
    } catch (error) {
      this.logger.warn('response cache read failed', { requestId, message: error instanceof Error ? error.message : String(error) });
      return undefined;
    }
  }

  set(key: string, answer: IRResponse, requestId: string): void {
    const text = serializeAnswer(answer);
    if (Buffer.byteLength(text) > this.settings.maxEntryBytes) return;
    Promise.resolve()
      .then(() => this.settings.store.set(key, text, this.settings.ttlMs))
      .catch((error: unknown) =>
        this.logger.warn('response cache write failed', { requestId, message: error instanceof Error ? error.message : String(error) }),
      );
  }
}
