import { createHash } from 'node:crypto';

/**
 * Who is calling. The key itself never appears here: `id` is what logs, hooks and stores use.
 */
export interface KeyRecord {
  /** Stable, non-secret identifier of the key. */
  id: string;
  disabled?: boolean;
  /** Public model ids the key may use, or `'*'` for every model. */
  models: readonly string[] | '*';
  /** The group the key belongs to; a model that lists `groups` serves only those. Default `default`. */
  group?: string;
  /** Free-form data for hooks and custom policies (owner, plan…). */
  metadata?: Record<string, unknown>;
}

/** What a key store sees of the request, so a host can resolve keys from its own auth. */
export interface KeyLookupContext {
  request: Request;
  /** The host's per-request context (Express `req`/`res`, a resolved user…). */
  serverContext: unknown;
}

/** Resolves an API key to its record; `undefined` means unknown (401). */
export interface KeyStore {
  lookup(key: string, context: KeyLookupContext): Promise<KeyRecord | undefined> | KeyRecord | undefined;
}

export interface StaticKey {
  key: string;
  id?: string;
  models?: readonly string[] | '*';
  group?: string;
  disabled?: boolean;
  metadata?: Record<string, unknown>;
}

/** A key's default id: a short hash, so two keys never share an id and the key stays secret. */
export function keyId(key: string): string {
  return 'key_' + createHash('sha256').update(key).digest('hex').slice(0, 12);
}

/** Keys from a list (options or the config file). */
export class StaticKeyStore implements KeyStore {
  private readonly records = new Map<string, KeyRecord>();

  constructor(keys: readonly StaticKey[]) {
    for (const entry of keys) {
      const models = entry.models ?? '*';
      this.records.set(entry.key, {
        id: entry.id ?? keyId(entry.key),
        models: models === '*' || models.includes('*') ? '*' : [...models],
        group: entry.group ?? 'default',
        disabled: entry.disabled ?? false,
        ...(entry.metadata ? { metadata: entry.metadata } : {}),
      });
    }
  }

  lookup(key: string): KeyRecord | undefined {
    return this.records.get(key);
  }
}
