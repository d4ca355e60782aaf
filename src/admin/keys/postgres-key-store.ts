import pg from 'pg';
import type { KeyRecord } from '../../auth/key-store.js';
import { jsonLogger, type Logger } from '../../logger.js';
import { PostgresConnection, type PostgresConnectionOptions } from '../../postgres/connection.js';
import { couldBeManagedKey, hashKeySecret, newKeySecret } from './key-secret.js';
import { cacheOptions, type LookupAnswer, LookupCache } from './lookup-cache.js';
import {
  auditEntry,
  decodeSequenceCursor,
  encodeCursor,
  newManagedKey,
  patchedKey,
  revokedKey,
  rotatedKey,
  shownKey,
  withoutUndefined,
} from './managed-key.js';
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

export interface PostgresKeyStoreOptions extends PostgresConnectionOptions {
  /**
   * How long a lookup's answer is reused in this process, in ms (0–500). Default 500. Changes
   * made anywhere empty it at once (LISTEN/NOTIFY); this bounds it when a notification is lost.
   */
  cacheTtlMs?: number | undefined;
  /** Most answers the lookup cache holds. Default 10,000. */
  cacheSize?: number | undefined;
  /** How long connecting and each query may take before the call fails, in ms, for a pool the store opens. Default 2000. */
  timeoutMs?: number | undefined;
  /** Where a lost notification connection is told. Default JSON lines on stderr. */
  logger?: Logger | undefined;
}

/** The channel every instance listens on; the payload is the changed key's id. */
const CHANNEL = 'infergate_keys';
/** Waits between attempts to listen again, growing to the last. */
const RELISTEN_MS = [100, 500, 1000, 5000];

/** A key row: the operator's settings in one jsonb, the rest in columns. */
interface KeyRow {
  id: string;
  seq: string;
  settings: KeySettings;
  prefix: string;
  created_at: string;
  updated_at: string;
  revoked_at: string | null;
  previous_expires_at: string | null;
}

/**
 * Managed keys in PostgreSQL (`pg`, an optional peer dependency), shared by every instance on the
 * database and kept across restarts. Import it from `infergate/postgres`:
 *
 * ```ts
 * import { PostgresKeyStore } from 'infergate/postgres';
 * const keys = new PostgresKeyStore({ url: process.env.DATABASE_URL });
 * ```
 *
 * Tables (made on first use, in `schema`): `infergate_keys` (one row a key, no secret),
 * `infergate_key_hashes` (SHA-256 of each usable secret → key id; a previous secret's row has
 * `expires_at`) and `infergate_audit`. Every change and its audit row are one transaction, which
 * also sends `pg_notify('infergate_keys', id)`: each instance LISTENs on a connection of its own
 * and empties its lookup cache at once. Times are Node's clock (ms since epoch), passed to each
 * query. A lookup that cannot reach the database throws, and the gateway refuses the request (503).
 */
export class PostgresKeyStore implements ManagedKeyStore {
  readonly kind = 'postgres';
  private readonly connection: PostgresConnection;
  private readonly cache: LookupCache;
  private readonly logger: Logger;
  private readonly keys: string;
  private readonly hashes: string;
  private readonly audits: string;
  private migrated: Promise<void> | undefined;
  private listener: pg.Client | undefined;
  private relistenTimer: NodeJS.Timeout | undefined;
  private relistenAttempt = 0;
  private closed = false;

  constructor(options: PostgresKeyStoreOptions) {
    if (!options) throw new TypeError('PostgresKeyStore: pass `url` (a connection string) or `pool` (a pg.Pool)');
    const timeoutMs = options.timeoutMs ?? 2000;
    if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) throw new TypeError(`PostgresKeyStore: timeoutMs must be a positive number, got ${options.timeoutMs}`);
    const cache = cacheOptions('PostgresKeyStore', options.cacheTtlMs, options.cacheSize);
    this.cache = new LookupCache(cache.ttlMs, cache.size);
    this.logger = options.logger ?? jsonLogger;
    this.connection = new PostgresConnection(options, 'PostgresKeyStore', { connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs });
    this.keys = this.connection.table('infergate_keys');
    this.hashes = this.connection.table('infergate_key_hashes');
    this.audits = this.connection.table('infergate_audit');
  }

  async lookup(secret: string): Promise<KeyRecord | undefined> {
    if (!couldBeManagedKey(secret)) return undefined;
    await this.ready();
    const hash = hashKeySecret(secret);
    return this.cache.get(hash, () => this.find(hash));
  }

  async create(settings: KeySettings, actor: Actor): Promise<IssuedKey> {
    await this.ready();
    const now = Date.now();
    const secret = newKeySecret();
    const key = newManagedKey(settings, secret, now);
    await this.change(async (client) => {
      await client.query(`INSERT INTO ${this.keys} (id, settings, prefix, created_at, updated_at) VALUES ($1, $2, $3, $4, $4)`, [
        key.id,
        settingsOf(key),
        key.prefix,
        now,
      ]);
      await client.query(`INSERT INTO ${this.hashes} (hash, key_id) VALUES ($1, $2)`, [hashKeySecret(secret), key.id]);
      await this.record(client, now, actor, 'create', undefined, key);
    });
    return { key, secret };
  }

  async get(id: string): Promise<ManagedKey | undefined> {
    await this.ready();
    const { rows } = await this.connection.pool.query<KeyRow>(`SELECT * FROM ${this.keys} WHERE id = $1`, [id]);
    return rows[0] && shownKey(keyOf(rows[0]), Date.now());
  }

  async list(page: PageRequest & { includeRevoked?: boolean | undefined }): Promise<Page<ManagedKey>> {
    const before = page.cursor === undefined ? null : decodeSequenceCursor(page.cursor, 'keys');
    await this.ready();
    const { rows } = await this.connection.pool.query<KeyRow>(
      `SELECT * FROM ${this.keys} WHERE ($1::bigint IS NULL OR seq < $1) AND ($2 OR revoked_at IS NULL) ORDER BY seq DESC LIMIT $3`,
      [before, page.includeRevoked === true, page.limit + 1],
    );
    const now = Date.now();
    const data = rows.slice(0, page.limit).map((row) => shownKey(keyOf(row), now));
    return rows.length > page.limit ? { data, next: encodeCursor('keys', Number(rows[page.limit - 1]!.seq)) } : { data };
  }

  async update(id: string, patch: KeyPatch, actor: Actor): Promise<ManagedKey | undefined> {
    await this.ready();
    return this.change(async (client) => {
      const before = await this.changeable(client, id);
      if (!before) return undefined;
      const now = Date.now();
      const after = patchedKey(shownKey(before, now), patch, now);
      await client.query(`UPDATE ${this.keys} SET settings = $2, updated_at = $3 WHERE id = $1`, [id, settingsOf(after), now]);
      await this.record(client, now, actor, 'update', before, after);
      return after;
    });
  }

  async rotate(id: string, options: { graceMs: number }, actor: Actor): Promise<IssuedKey | undefined> {
    await this.ready();
    return this.change(async (client) => {
      const before = await this.changeable(client, id);
      if (!before) return undefined;
      const now = Date.now();
      const secret = newKeySecret();
      const graceEnd = options.graceMs > 0 ? now + options.graceMs : undefined;
      // Only the newest previous secret keeps working: an older one's grace ends here.
      await client.query(`DELETE FROM ${this.hashes} WHERE key_id = $1 AND expires_at IS NOT NULL`, [id]);
      if (graceEnd === undefined) await client.query(`DELETE FROM ${this.hashes} WHERE key_id = $1`, [id]);
      else await client.query(`UPDATE ${this.hashes} SET expires_at = $2 WHERE key_id = $1`, [id, graceEnd]);
      await client.query(`INSERT INTO ${this.hashes} (hash, key_id) VALUES ($1, $2)`, [hashKeySecret(secret), id]);
      const after = rotatedKey(before, secret, options.graceMs, now);
      await client.query(`UPDATE ${this.keys} SET prefix = $2, updated_at = $3, previous_expires_at = $4 WHERE id = $1`, [
        id,
        after.prefix,
        now,
        graceEnd ?? null,
      ]);
      await this.record(client, now, actor, 'rotate', before, after);
      return { key: after, secret };
    });
  }

  async revoke(id: string, actor: Actor): Promise<ManagedKey | undefined> {
    await this.ready();
    return this.change(async (client) => {
      const before = await this.locked(client, id);
      if (!before || before.revokedAt !== undefined) return before;
      const now = Date.now();
      const after = revokedKey(before, now);
      await client.query(`UPDATE ${this.keys} SET updated_at = $2, revoked_at = $2, previous_expires_at = NULL WHERE id = $1`, [id, now]);
      await this.record(client, now, actor, 'revoke', before, after);
      return after;
    });
  }

  async audit(page: PageRequest & { keyId?: string | undefined }): Promise<Page<AuditEntry>> {
    const before = page.cursor === undefined ? null : decodeSequenceCursor(page.cursor, 'audit');
    await this.ready();
    const { rows } = await this.connection.pool.query<{
      id: string;
      at: string;
      actor: string;
      address: string | null;
      action: AuditAction;
      key_id: string;
      before: ManagedKey | null;
      after: ManagedKey;
    }>(`SELECT * FROM ${this.audits} WHERE ($1::bigint IS NULL OR id < $1) AND ($2::text IS NULL OR key_id = $2) ORDER BY id DESC LIMIT $3`, [
      before,
      page.keyId ?? null,
      page.limit + 1,
    ]);
    const data = rows
      .slice(0, page.limit)
      .map((row) => auditEntry(row.id, Number(row.at), { name: row.actor, address: row.address ?? undefined }, row.action, row.before ?? undefined, row.after));
    return rows.length > page.limit ? { data, next: encodeCursor('audit', Number(rows[page.limit - 1]!.id)) } : { data };
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.relistenTimer);
    const listener = this.listener;
    this.listener = undefined;
    await listener?.end().catch(() => {});
    await this.connection.close();
  }

  /** The tables, made once (again after a failure: the server may be back), and the notification listener started. */
  private ready(): Promise<void> {
    this.migrated ??= this.connection.migrate(this.tables()).then(
      // Not awaited: a listener slow to connect must not hold lookups (the TTL bounds what it misses).
      () => void this.listen(),
      (error: unknown) => {
        this.migrated = undefined;
        throw error;
      },
    );
    return this.migrated;
  }

  private tables(): string[] {
    return [
      `CREATE TABLE IF NOT EXISTS ${this.keys} (
        id text PRIMARY KEY,
        seq bigserial UNIQUE,
        settings jsonb NOT NULL,
        prefix text NOT NULL,
        created_at bigint NOT NULL,
        updated_at bigint NOT NULL,
        revoked_at bigint,
        previous_expires_at bigint
      )`,
      `CREATE TABLE IF NOT EXISTS ${this.hashes} (
        hash text PRIMARY KEY,
        key_id text NOT NULL REFERENCES ${this.keys} (id),
        expires_at bigint
      )`,
      `CREATE INDEX IF NOT EXISTS infergate_key_hashes_key_id ON ${this.hashes} (key_id)`,
      `CREATE TABLE IF NOT EXISTS ${this.audits} (
        id bigserial PRIMARY KEY,
        at bigint NOT NULL,
        actor text NOT NULL,
        address text,
        action text NOT NULL,
        key_id text NOT NULL,
        before jsonb,
        after jsonb
      )`,
      `CREATE INDEX IF NOT EXISTS infergate_audit_key_id ON ${this.audits} (key_id, id)`,
    ];
  }

  /** One indexed read: the key of a hash, with when that secret stops working. */
  private async find(hash: string): Promise<LookupAnswer> {
    const { rows } = await this.connection.pool.query<KeyRow & { expires_at: string | null }>(
      `SELECT k.*, h.expires_at FROM ${this.hashes} h JOIN ${this.keys} k ON k.id = h.key_id WHERE h.hash = $1 AND (h.expires_at IS NULL OR h.expires_at > $2)`,
      [hash, Date.now()],
    );
    const row = rows[0];
    if (!row) return { record: undefined };
    return { record: recordOf(keyOf(row)), ...(row.expires_at === null ? {} : { expiresAt: Number(row.expires_at) }) };
  }

  /** A change in one transaction that tells every instance (this one at once, before it answers). */
  private async change<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    try {
      return await this.connection.transaction(work);
    } finally {
      this.cache.clear();
    }
  }

  /** The key, locked for the transaction, when it exists and may still change. */
  private async changeable(client: pg.PoolClient, id: string): Promise<ManagedKey | undefined> {
    const key = await this.locked(client, id);
    if (key?.revokedAt !== undefined) throw new KeyRevokedError(id);
    return key;
  }

  private async locked(client: pg.PoolClient, id: string): Promise<ManagedKey | undefined> {
    const { rows } = await client.query<KeyRow>(`SELECT * FROM ${this.keys} WHERE id = $1 FOR UPDATE`, [id]);
    return rows[0] && keyOf(rows[0]);
  }

  /** The audit row and the notification, in the change's transaction. */
  private async record(client: pg.PoolClient, at: number, actor: Actor, action: AuditAction, before: ManagedKey | undefined, after: ManagedKey): Promise<void> {
    await client.query(`INSERT INTO ${this.audits} (at, actor, address, action, key_id, before, after) VALUES ($1, $2, $3, $4, $5, $6, $7)`, [
      at,
      actor.name,
      actor.address ?? null,
      action,
      after.id,
      before === undefined ? null : JSON.stringify(before),
      JSON.stringify(after),
    ]);
    await client.query('SELECT pg_notify($1, $2)', [CHANNEL, after.id]);
  }

  /**
   * A connection of its own that LISTENs for changes and empties the cache on each. When it is
   * lost, the cache is emptied (notifications may have been missed) and it connects again.
   */
  private async listen(): Promise<void> {
    if (this.listener || this.closed) return;
    const client = new pg.Client({
      ...(this.connection.pool.options as pg.ClientConfig),
      // So an operator (and a test) can tell it in pg_stat_activity.
      application_name: `infergate key changes (${this.connection.schema})`.slice(0, 63),
    });
    this.listener = client;
    const lost = (error?: unknown) => {
      if (this.listener !== client) return;
      this.listener = undefined;
      this.cache.clear();
      client.end().catch(() => {});
      if (this.closed) return;
      this.logger.warn('PostgresKeyStore: the key-change notifications are lost; listening again', {
        message: error instanceof Error ? error.message : 'connection ended',
      });
      const wait = RELISTEN_MS[Math.min(this.relistenAttempt++, RELISTEN_MS.length - 1)];
      this.relistenTimer = setTimeout(() => void this.listen().catch(() => {}), wait);
      this.relistenTimer.unref();
    };
    client.on('error', lost);
    client.on('end', () => lost());
    client.on('notification', () => this.cache.clear());
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANNEL}`);
      this.relistenAttempt = 0;
      // Changes made while not listening were not heard.
      this.cache.clear();
    } catch (error) {
      lost(error);
    }
  }
}

/** The operator's settings of a key, as the `settings` column keeps them. */
function settingsOf(key: ManagedKey): KeySettings {
  const { name, models, group, limits, budget, disabled, metadata, guardrails, mcp } = key;
  return withoutUndefined({ name, models, group, limits, budget, disabled, metadata, guardrails, mcp });
}

function keyOf(row: KeyRow): ManagedKey {
  return withoutUndefined({
    id: row.id,
    ...row.settings,
    models: row.settings.models ?? '*',
    group: row.settings.group ?? 'default',
    disabled: row.settings.disabled ?? false,
    prefix: row.prefix,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
    revokedAt: row.revoked_at === null ? undefined : Number(row.revoked_at),
    previousExpiresAt: row.previous_expires_at === null ? undefined : Number(row.previous_expires_at),
  });
}
