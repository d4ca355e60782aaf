import type { GuardrailSpec } from '../../guardrails/guardrail-schema.js';
import type { KeyRecord, KeyStore } from '../../auth/key-store.js';
import type { Budget } from '../../policy/budget.js';
import type { KeyLimits } from '../../policy/limit-engine.js';

/**
 * Keys made and changed at run time through the admin API (docs/admin.md). A managed store is a
 * `KeyStore` the gateway authenticates with, plus the operator's actions on it. It keeps only a
 * hash of each key: the key itself is shown once, by `create` and `rotate`, and never again.
 * `MemoryKeyStore` (this process), `PostgresKeyStore` (`infergate/postgres`) and `RedisKeyStore`
 * (`infergate/redis`) implement it.
 */

/** What the operator sets on a key: every field of `KeyRecord` the admin API can change. */
export interface KeySettings {
  /** A label for people (`"ci"`, `"alice's laptop"`); not unique, not secret. */
  name?: string | undefined;
  models?: readonly string[] | '*' | undefined;
  group?: string | undefined;
  limits?: KeyLimits | undefined;
  budget?: Budget | false | undefined;
  disabled?: boolean | undefined;
  metadata?: Record<string, unknown> | undefined;
  /** The key's guardrails (docs/policies.md, "Guardrails"). */
  guardrails?: readonly GuardrailSpec[] | undefined;
  /** The MCP servers and tools the key may use at `/mcp` (`KeyRecord.mcp`). */
  mcp?: readonly string[] | undefined;
}

/**
 * A change: each field given replaces the key's; `null` clears it (back to the gateway's default:
 * no limits of its own, the default budget, no name).
 */
export type KeyPatch = {
  [field in keyof KeySettings]?: KeySettings[field] | null;
};

/** A key as the admin API shows it: never the key, never its hash. */
export interface ManagedKey {
  id: string;
  name?: string | undefined;
  models: readonly string[] | '*';
  group: string;
  limits?: KeyLimits | undefined;
  budget?: Budget | false | undefined;
  disabled: boolean;
  metadata?: Record<string, unknown> | undefined;
  guardrails?: readonly GuardrailSpec[] | undefined;
  mcp?: readonly string[] | undefined;
  /** The key's first characters (`sk-ig-Ab12…`), so people can tell which key they hold. */
  prefix: string;
  /** ms since epoch. */
  createdAt: number;
  updatedAt: number;
  /** Set once revoked: the key is refused everywhere, and cannot be changed or rotated again. */
  revokedAt?: number | undefined;
  /** While a rotation's grace period runs: when the previous key stops working (ms since epoch). */
  previousExpiresAt?: number | undefined;
}

/** Who acted: the admin credential's name (or the host's own `authorize` answer) and where from. */
export interface Actor {
  name: string;
  /** The client's address when the host tells it. */
  address?: string | undefined;
}

export type AuditAction = 'create' | 'update' | 'rotate' | 'revoke';

/** One admin action, as the audit table keeps it: before and after are `ManagedKey`s (no secret in either). */
export interface AuditEntry {
  /** Unique and increasing in the order the store recorded them (the paging cursor). */
  id: string;
  at: number;
  actor: string;
  address?: string | undefined;
  action: AuditAction;
  keyId: string;
  before?: ManagedKey | undefined;
  after?: ManagedKey | undefined;
}

/** A page of a list: `next` is the cursor for the following page, absent on the last. */
export interface Page<T> {
  data: T[];
  next?: string | undefined;
}

export interface PageRequest {
  /** A `next` from the previous page. Stores reject a cursor they did not make (`InvalidCursorError`). */
  cursor?: string | undefined;
  /** 1–500. */
  limit: number;
}

/** A key just made or rotated: the only time its secret is known. */
export interface IssuedKey {
  key: ManagedKey;
  secret: string;
}

export interface ManagedKeyStore extends KeyStore {
  /** Makes a key (its id and secret are the store's); audited as `create`. */
  create(settings: KeySettings, actor: Actor): Promise<IssuedKey>;
  get(id: string): Promise<ManagedKey | undefined>;
  /** Keys by creation, newest first; revoked ones only when asked. */
  list(page: PageRequest & { includeRevoked?: boolean | undefined }): Promise<Page<ManagedKey>>;
  /** `undefined`: no such key. Throws `KeyRevokedError` on a revoked key. Audited as `update`. */
  update(id: string, patch: KeyPatch, actor: Actor): Promise<ManagedKey | undefined>;
  /**
   * A new secret for the key; the previous one keeps working for `graceMs` (0: stops at once), on
   * every instance. A key rotated again within the grace period keeps only the newest previous
   * secret. Audited as `rotate`.
   */
  rotate(id: string, options: { graceMs: number }, actor: Actor): Promise<IssuedKey | undefined>;
  /**
   * Refuses the key from now on, on every instance within a second (its lookups are not cached
   * longer, and instances are told at once where the store can). Audited as `revoke`.
   */
  revoke(id: string, actor: Actor): Promise<ManagedKey | undefined>;
  /** The audit entries, newest first, of one key or all. */
  audit(page: PageRequest & { keyId?: string | undefined }): Promise<Page<AuditEntry>>;
  /** Releases connections and subscriptions (a store given an open client leaves it open). */
  close?(): Promise<void>;
  /** What kind of store this is, for the start-up line and the dashboard: `memory`, `postgres`, `redis`. */
  readonly kind: string;
}

export class KeyRevokedError extends Error {
  constructor(readonly keyId: string) {
    super(`The key ${keyId} is revoked.`);
    this.name = 'KeyRevokedError';
  }
}

export class InvalidCursorError extends Error {
  constructor() {
    super('The cursor is not one this list gave.');
    this.name = 'InvalidCursorError';
  }
}

/** The `KeyRecord` the gateway authenticates with, from a managed key. */
export function recordOf(key: ManagedKey): KeyRecord {
  return {
    id: key.id,
    models: key.models,
    group: key.group,
    disabled: key.disabled || key.revokedAt !== undefined,
    ...(key.metadata ? { metadata: key.metadata } : {}),
    ...(key.limits ? { limits: key.limits } : {}),
    ...(key.budget !== undefined ? { budget: key.budget } : {}),
    ...(key.guardrails ? { guardrails: key.guardrails } : {}),
    ...(key.mcp ? { mcp: key.mcp } : {}),
  };
}
