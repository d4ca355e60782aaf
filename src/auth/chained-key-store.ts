import type { UsageEvent } from '../policy/events.js';
import type { KeyLookupContext, KeyRecord, KeyStore } from './key-store.js';

/**
 * Several key stores as one, asked in order: the standalone server's config-file keys first, then
 * the keys made at run time. The first store that knows a key answers; a store that fails throws
 * (the request is refused, never passed to the next store). A request is charged to the store
 * whose record it was.
 */
export class ChainedKeyStore implements KeyStore {
  /** Which store each record came from, for `charge`. */
  private readonly owners = new WeakMap<KeyRecord, KeyStore>();

  constructor(private readonly stores: readonly KeyStore[]) {}

  async lookup(key: string, context: KeyLookupContext): Promise<KeyRecord | undefined> {
    for (const store of this.stores) {
      const record = await store.lookup(key, context);
      if (record) {
        this.owners.set(record, store);
        return record;
      }
    }
    return undefined;
  }

  async charge(key: KeyRecord, event: UsageEvent): Promise<void> {
    await this.owners.get(key)?.charge?.(key, event);
  }
}
