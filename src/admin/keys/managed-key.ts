import { newKeyId, visiblePrefix } from './key-secret.js';
import { type Actor, type AuditAction, type AuditEntry, InvalidCursorError, type KeyPatch, type KeySettings, type ManagedKey } from './managed-key-store.js';

/**
 * What every managed store does alike, whatever it keeps its keys in: a key made from settings,
 * a patch applied, the audit entry of a change, and the paging cursors. The stores only persist.
 */

/** A new key from the operator's settings (its secret's hash is the store's to keep). */
export function newManagedKey(settings: KeySettings, secret: string, now: number): ManagedKey {
  return patchedKey(
    { id: newKeyId(), models: '*', group: 'default', disabled: false, prefix: visiblePrefix(secret), createdAt: now, updatedAt: now },
    settings,
    now,
  );
}

/** The key with each field the patch gives replaced, `null` back to the default. */
export function patchedKey(key: ManagedKey, patch: KeyPatch, now: number): ManagedKey {
  const next: ManagedKey = { ...key, updatedAt: now };
  if (patch.name !== undefined) next.name = patch.name ?? undefined;
  if (patch.models !== undefined) next.models = patch.models === null ? '*' : patch.models === '*' ? '*' : [...patch.models];
  if (patch.group !== undefined) next.group = patch.group ?? 'default';
  if (patch.limits !== undefined) next.limits = patch.limits ?? undefined;
  if (patch.budget !== undefined) next.budget = patch.budget ?? undefined;
  if (patch.disabled !== undefined) next.disabled = patch.disabled ?? false;
  if (patch.metadata !== undefined) next.metadata = patch.metadata ?? undefined;
  if (patch.guardrails !== undefined) next.guardrails = patch.guardrails ?? undefined;
  if (patch.mcp !== undefined) next.mcp = patch.mcp === null ? undefined : [...patch.mcp];
  return withoutUndefined(next);
}

/** The key with a new secret: the prefix people see is the new one's; the previous one works until `graceMs` from now. */
export function rotatedKey(key: ManagedKey, secret: string, graceMs: number, now: number): ManagedKey {
  const { previousExpiresAt: _old, ...rest } = key;
  return { ...rest, prefix: visiblePrefix(secret), updatedAt: now, ...(graceMs > 0 ? { previousExpiresAt: now + graceMs } : {}) };
}

/** The key revoked now (a grace period running ends with it). */
export function revokedKey(key: ManagedKey, now: number): ManagedKey {
  const { previousExpiresAt: _grace, ...rest } = key;
  return { ...rest, updatedAt: now, revokedAt: now };
}

/** The key as shown: a grace period that is over is no longer mentioned. */
export function shownKey(key: ManagedKey, now: number): ManagedKey {
  if (key.previousExpiresAt === undefined || key.previousExpiresAt > now) return key;
  const { previousExpiresAt: _over, ...shown } = key;
  return shown;
}

export function auditEntry(id: string, at: number, actor: Actor, action: AuditAction, before: ManagedKey | undefined, after: ManagedKey): AuditEntry {
  return withoutUndefined({ id, at, actor: actor.name, address: actor.address, action, keyId: after.id, before, after });
}

/** Fields set to `undefined` dropped, so a key reads the same from every store (and in JSON). */
export function withoutUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, field]) => field !== undefined)) as T;
}

/**
 * Cursors are opaque to clients: base64url of a small JSON array: the list's name and a sequence
 * number. Anything else (garbled, from another list, of the wrong shape) is an `InvalidCursorError`.
 */
export function encodeCursor(list: 'keys' | 'audit', sequence: number): string {
  return Buffer.from(JSON.stringify([list, sequence])).toString('base64url');
}

/**
 * A list's position: the items with a smaller sequence number than this one (keys are listed by
 * the order the store made them, newest first, audit entries by the order it recorded them).
 */
export function decodeSequenceCursor(cursor: string, list: 'keys' | 'audit'): number {
  if (cursor.length > 200 || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw new InvalidCursorError();
  let parsed: unknown;
  try {
    const text = Buffer.from(cursor, 'base64url').toString('utf8');
    // base64url decoding forgives stray characters: only the exact encoding this store made passes.
    if (Buffer.from(text).toString('base64url') !== cursor) throw new InvalidCursorError();
    parsed = JSON.parse(text);
  } catch {
    throw new InvalidCursorError();
  }
  if (!Array.isArray(parsed) || parsed.length !== 2 || parsed[0] !== list) throw new InvalidCursorError();
  const sequence: unknown = parsed[1];
  if (typeof sequence !== 'number' || !Number.isSafeInteger(sequence) || sequence < 1) throw new InvalidCursorError();
  return sequence;
}
