import type { KeyRecord } from '../../auth/key-store.js';
import { couldBeManagedKey, hashKeySecret, newKeySecret } from './key-secret.js';
import { auditEntry, decodeSequenceCursor, encodeCursor, newManagedKey, patchedKey, revokedKey, rotatedKey, shownKey } from './managed-key.js';
import {
  type Actor,
  type AuditAction,
  type AuditEntry,
  type IssuedKey,
  type KeyPatch,
  KeyRevokedError,
  type KeySettings,
  type ManagedKey,
  type ManagedKeyStore,
  type Page,
  type PageRequest,
  recordOf,
} from './managed-key-store.js';

export interface MemoryKeyStoreOptions {
  /** Most audit entries kept; past it the oldest go first. Default 10,000. */
  auditSize?: number | undefined;
}

/** A secret's hash points at its key; a previous secret's also says when it stops working. */
interface HashEntry {
  keyId: string;
  /** ms since epoch; absent for the key's current secret. */
  expiresAt?: number | undefined;
}

/**
 * Managed keys in this process's memory: for one instance, tests and trying the admin API. Lost
 * on restart; use `PostgresKeyStore` or `RedisKeyStore` to keep keys and share them. Only
 * SHA-256 hashes of the secrets are kept (src/admin/keys/key-secret.ts).
 */
export class MemoryKeyStore implements ManagedKeyStore {
  readonly kind = 'memory';
  private readonly keys = new Map<string, ManagedKey>();
  /** Each key's place in the order of creation (the list's order and cursor). */
  private readonly created = new Map<string, number>();
  private keysMade = 0;
  private readonly hashes = new Map<string, HashEntry>();
  /** Each key's current and previous hash, so a rotation or revocation finds them. */
  private readonly hashesOf = new Map<string, { current: string; previous?: string | undefined }>();
  private readonly entries: AuditEntry[] = [];
  private sequence = 0;
  private readonly auditSize: number;

  constructor(options: MemoryKeyStoreOptions = {}) {
    const size = options.auditSize ?? 10_000;
    if (!Number.isSafeInteger(size) || size < 1) throw new TypeError(`MemoryKeyStore: auditSize must be a positive integer, got ${size}`);
    this.auditSize = size;
  }

  lookup(secret: string): KeyRecord | undefined {
    if (!couldBeManagedKey(secret)) return undefined;
    const entry = this.hashes.get(hashKeySecret(secret));
    if (!entry || (entry.expiresAt !== undefined && entry.expiresAt <= Date.now())) return undefined;
    const key = this.keys.get(entry.keyId);
    return key && recordOf(key);
  }

  async create(settings: KeySettings, actor: Actor): Promise<IssuedKey> {
    const now = Date.now();
    const secret = newKeySecret();
    const key = newManagedKey(settings, secret, now);
    const hash = hashKeySecret(secret);
    this.keys.set(key.id, key);
    this.created.set(key.id, ++this.keysMade);
    this.hashes.set(hash, { keyId: key.id });
    this.hashesOf.set(key.id, { current: hash });
    this.record(now, actor, 'create', undefined, key);
    return { key: structuredClone(key), secret };
  }

  async get(id: string): Promise<ManagedKey | undefined> {
    const key = this.keys.get(id);
    return key && structuredClone(shownKey(key, Date.now()));
  }

  async list(page: PageRequest & { includeRevoked?: boolean | undefined }): Promise<Page<ManagedKey>> {
    const before = page.cursor === undefined ? Number.POSITIVE_INFINITY : decodeSequenceCursor(page.cursor, 'keys');
    const now = Date.now();
    // Newest first: the map keeps the order keys were made in.
    const matching = [...this.keys.values()]
      .reverse()
      .filter((key) => this.created.get(key.id)! < before && (page.includeRevoked || key.revokedAt === undefined));
    const data = matching.slice(0, page.limit).map((key) => structuredClone(shownKey(key, now)));
    const last = data.at(-1);
    return matching.length > page.limit && last ? { data, next: encodeCursor('keys', this.created.get(last.id)!) } : { data };
  }

  async update(id: string, patch: KeyPatch, actor: Actor): Promise<ManagedKey | undefined> {
    const before = this.changeable(id);
    if (!before) return undefined;
    const now = Date.now();
    const after = patchedKey(shownKey(before, now), patch, now);
    this.keys.set(id, after);
    this.record(now, actor, 'update', before, after);
    return structuredClone(after);
  }

  async rotate(id: string, options: { graceMs: number }, actor: Actor): Promise<IssuedKey | undefined> {
    const before = this.changeable(id);
    if (!before) return undefined;
    const now = Date.now();
    const secret = newKeySecret();
    const hash = hashKeySecret(secret);
    const after = rotatedKey(before, secret, options.graceMs, now);
    const own = this.hashesOf.get(id)!;
    // Only the newest previous secret keeps working: an older one's grace ends here.
    if (own.previous) this.hashes.delete(own.previous);
    if (options.graceMs > 0) this.hashes.set(own.current, { keyId: id, expiresAt: now + options.graceMs });
    else this.hashes.delete(own.current);
    this.hashes.set(hash, { keyId: id });
    this.hashesOf.set(id, { current: hash, previous: options.graceMs > 0 ? own.current : undefined });
    this.keys.set(id, after);
    this.record(now, actor, 'rotate', before, after);
    return { key: structuredClone(after), secret };
  }

  async revoke(id: string, actor: Actor): Promise<ManagedKey | undefined> {
    const before = this.keys.get(id);
    if (!before || before.revokedAt !== undefined) return before && structuredClone(before);
    const now = Date.now();
    const after = revokedKey(before, now);
    this.keys.set(id, after);
    this.record(now, actor, 'revoke', before, after);
    return structuredClone(after);
  }

  async audit(page: PageRequest & { keyId?: string | undefined }): Promise<Page<AuditEntry>> {
    const before = page.cursor === undefined ? Number.POSITIVE_INFINITY : decodeSequenceCursor(page.cursor, 'audit');
    const data: AuditEntry[] = [];
    let more = false;
    for (let index = this.entries.length - 1; index >= 0; index--) {
      const entry = this.entries[index]!;
      if (Number(entry.id) >= before || (page.keyId !== undefined && entry.keyId !== page.keyId)) continue;
      if (data.length === page.limit) {
        more = true;
        break;
      }
      data.push(structuredClone(entry));
    }
    const last = data.at(-1);
    return more && last ? { data, next: encodeCursor('audit', Number(last.id)) } : { data };
  }

  /** The key, when it exists and may still change. */
  private changeable(id: string): ManagedKey | undefined {
    const key = this.keys.get(id);
    if (key?.revokedAt !== undefined) throw new KeyRevokedError(id);
    return key;
  }

  private record(at: number, actor: Actor, action: AuditAction, before: ManagedKey | undefined, after: ManagedKey): void {
    this.sequence += 1;
    this.entries.push(structuredClone(auditEntry(String(this.sequence), at, actor, action, before, after)));
    if (this.entries.length > this.auditSize) this.entries.shift();
  }
}
