import type { KeyRecord } from '../../auth/key-store.js';
import { jsonLogger, type Logger } from '../../logger.js';
import type { RedisClient, RedisConnectionOptions } from '../../redis/connection.js';
import { FailFastRedis } from '../../redis/fail-fast-redis.js';
import { duplicateForSubscribing } from '../../redis/subscriber.js';
import { couldBeManagedKey, hashKeySecret, newKeySecret } from './key-secret.js';
import { cacheOptions, type LookupAnswer, LookupCache } from './lookup-cache.js';
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

export interface RedisKeyStoreOptions extends RedisConnectionOptions {
  /** Prefix of every key and of the channel (no `{` or `}`: the store adds its own hash tag). Default `infergate:`. */
  keyPrefix?: string | undefined;
  /** How long a lookup's answer is reused in this process, in ms (0–500). Default 500; changes anywhere empty it at once (pub/sub). */
  cacheTtlMs?: number | undefined;
  /** Most answers the lookup cache holds. Default 10,000. */
  cacheSize?: number | undefined;
  /** Most audit entries kept (of all keys, and of each key); past it the oldest go. Default 10,000. */
  auditSize?: number | undefined;
  /** How long a call waits for Redis, in ms. Default 1000. */
  timeoutMs?: number | undefined;
  /** Where a lost notification subscription is told. Default JSON lines on stderr. */
  logger?: Logger | undefined;
}

/** What a secret's hash points at: the key, and when a previous secret stops working (ms, Node's clock). */
interface HashEntry {
  keyId: string;
  expiresAt?: number | undefined;
}

/** A key's usable hashes, so a rotation finds the ones to end. */
interface KeySecrets {
  current: string;
  previous?: string | undefined;
}

/** Attempts of a change that met other changes of the same key, before it gives up; each waits a little longer, at random. */
const CHANGE_ATTEMPTS = 20;
const CHANGE_BACKOFF_MS = 5;

/**
 * Managed keys in Redis (`ioredis`, an optional peer dependency), shared by every instance on it.
 * Import it from `infergate/redis`:
 *
 * ```ts
 * import { RedisKeyStore } from 'infergate/redis';
 * const keys = new RedisKeyStore({ url: process.env.REDIS_URL });
 * ```
 *
 * Every key lives under one hash tag, `<prefix>{managed-keys}:`, so the scripts that make a change
 * and its audit entry in one step work on a Redis Cluster (one slot; the store is small):
 * `key:<id>` (the key's JSON, no secret), `hash:<sha256>` (`{keyId, expiresAt?}`; a previous
 * secret's also has a PEXPIRE, and its `expiresAt` is checked in code: Redis's clock is never
 * trusted), `secrets:<id>` (the key's current and previous hash), sorted sets `all` and `active`
 * (key ids by creation number, for lists), `audit` and `audit:<id>` (entries by number, capped).
 * A change PUBLISHes the key's id on `<prefix>managed-keys`: each instance empties its lookup
 * cache when it hears it. A lookup that cannot reach Redis throws, and the gateway refuses the
 * request (503).
 */
export class RedisKeyStore implements ManagedKeyStore {
  readonly kind = 'redis';
  private readonly connection: FailFastRedis;
  private readonly cache: LookupCache;
  private readonly logger: Logger;
  private readonly base: string;
  private readonly channel: string;
  private readonly auditSize: number;
  private subscriber: RedisClient | undefined;
  private closed = false;

  constructor(options: RedisKeyStoreOptions) {
    if (!options) throw new TypeError('RedisKeyStore: pass `client` (an ioredis client or cluster), `url`, `cluster` or `sentinel`');
    const prefix = options.keyPrefix ?? 'infergate:';
    if (/[{}]/.test(prefix)) throw new TypeError(`RedisKeyStore: keyPrefix must not contain { or } (the store adds its own hash tag), got "${prefix}"`);
    const auditSize = options.auditSize ?? 10_000;
    if (!Number.isSafeInteger(auditSize) || auditSize < 1) throw new TypeError(`RedisKeyStore: auditSize must be a positive integer, got ${options.auditSize}`);
    this.auditSize = auditSize;
    const cache = cacheOptions('RedisKeyStore', options.cacheTtlMs, options.cacheSize);
    this.cache = new LookupCache(cache.ttlMs, cache.size);
    this.logger = options.logger ?? jsonLogger;
    this.base = `${prefix}{managed-keys}:`;
    this.channel = `${prefix}managed-keys`;
    this.connection = new FailFastRedis({ ...options, timeoutMs: options.timeoutMs ?? 1000, owner: 'RedisKeyStore' });
    this.subscribe();
  }

  async lookup(secret: string): Promise<KeyRecord | undefined> {
    if (!couldBeManagedKey(secret)) return undefined;
    const hash = hashKeySecret(secret);
    return this.cache.get(hash, () => this.find(hash));
  }

  async create(settings: KeySettings, actor: Actor): Promise<IssuedKey> {
    const now = Date.now();
    const secret = newKeySecret();
    const key = newManagedKey(settings, secret, now);
    const hash = hashKeySecret(secret);
    const secrets: KeySecrets = { current: hash };
    await this.call((redis) =>
      redis.eval(
        CREATE,
        9,
        this.at(`key:${key.id}`),
        this.at(`hash:${hash}`),
        this.at(`secrets:${key.id}`),
        this.at('all'),
        this.at('active'),
        this.at('keys:seq'),
        ...this.auditKeys(key.id),
        JSON.stringify(key),
        JSON.stringify({ keyId: key.id } satisfies HashEntry),
        JSON.stringify(secrets),
        key.id,
        JSON.stringify(auditEntry('', now, actor, 'create', undefined, key)),
        this.auditSize,
        this.channel,
      ),
    );
    this.cache.clear();
    return { key, secret };
  }

  async get(id: string): Promise<ManagedKey | undefined> {
    const json = await this.call((redis) => redis.get(this.at(`key:${id}`)));
    return json === null ? undefined : shownKey(JSON.parse(json) as ManagedKey, Date.now());
  }

  async list(page: PageRequest & { includeRevoked?: boolean | undefined }): Promise<Page<ManagedKey>> {
    const before = page.cursor === undefined ? '+inf' : `(${decodeSequenceCursor(page.cursor, 'keys')}`;
    const set = this.at(page.includeRevoked ? 'all' : 'active');
    const found = await this.call((redis) => redis.zrevrangebyscore(set, before, '-inf', 'WITHSCORES', 'LIMIT', 0, page.limit + 1));
    const ids = found.filter((_, index) => index % 2 === 0).slice(0, page.limit);
    const keys = ids.length === 0 ? [] : await this.call((redis) => redis.mget(...ids.map((id) => this.at(`key:${id}`))));
    const now = Date.now();
    const data = keys.flatMap((json) => (json === null ? [] : [shownKey(JSON.parse(json) as ManagedKey, now)]));
    return found.length > page.limit * 2 ? { data, next: encodeCursor('keys', Number(found[page.limit * 2 - 1])) } : { data };
  }

  async update(id: string, patch: KeyPatch, actor: Actor): Promise<ManagedKey | undefined> {
    return this.change(id, 'update', actor, (before, now) => ({ after: patchedKey(shownKey(before, now), patch, now) }));
  }

  async rotate(id: string, options: { graceMs: number }, actor: Actor): Promise<IssuedKey | undefined> {
    const secret = newKeySecret();
    const hash = hashKeySecret(secret);
    const after = await this.change(id, 'rotate', actor, (before, now, secrets) => {
      const graceEnd = options.graceMs > 0 ? now + options.graceMs : undefined;
      // Only the newest previous secret keeps working: an older one's grace ends here.
      const hashes: HashChange[] = [{ hash, value: { keyId: id } }];
      if (secrets.previous) hashes.push({ hash: secrets.previous });
      if (graceEnd === undefined) hashes.push({ hash: secrets.current });
      else hashes.push({ hash: secrets.current, value: { keyId: id, expiresAt: graceEnd }, ttlMs: options.graceMs });
      return {
        after: rotatedKey(before, secret, options.graceMs, now),
        secrets: { current: hash, ...(graceEnd === undefined ? {} : { previous: secrets.current }) },
        hashes,
      };
    });
    return after && { key: after, secret };
  }

  async revoke(id: string, actor: Actor): Promise<ManagedKey | undefined> {
    return this.change(id, 'revoke', actor, (before, now) => ({ after: revokedKey(before, now) }));
  }

  async audit(page: PageRequest & { keyId?: string | undefined }): Promise<Page<AuditEntry>> {
    const before = page.cursor === undefined ? '+inf' : `(${decodeSequenceCursor(page.cursor, 'audit')}`;
    const set = this.at(page.keyId === undefined ? 'audit' : `audit:${page.keyId}`);
    const members = await this.call((redis) => redis.zrevrangebyscore(set, before, '-inf', 'LIMIT', 0, page.limit + 1));
    const data = members.slice(0, page.limit).map((member) => {
      const colon = member.indexOf(':');
      return { ...(JSON.parse(member.slice(colon + 1)) as AuditEntry), id: member.slice(0, colon) };
    });
    return members.length > page.limit ? { data, next: encodeCursor('audit', Number(data.at(-1)!.id)) } : { data };
  }

  async close(): Promise<void> {
    this.closed = true;
    const subscriber = this.subscriber;
    this.subscriber = undefined;
    // Not QUIT: with its offline queue, a subscriber that cannot reach Redis would wait for ever.
    subscriber?.disconnect();
    await this.connection.close();
  }

  /** The key a name stands for, under the store's hash tag. */
  private at(name: string): string {
    return this.base + name;
  }

  private auditKeys(keyId: string): string[] {
    return [this.at('audit'), this.at(`audit:${keyId}`), this.at('audit:seq')];
  }

  private call<T>(run: (redis: RedisClient) => Promise<T>): Promise<T> {
    return this.connection.call(run);
  }

  /** The key of a hash, unless that secret's grace period is over (Node's clock). */
  private async find(hash: string): Promise<LookupAnswer> {
    const entryJson = await this.call((redis) => redis.get(this.at(`hash:${hash}`)));
    if (entryJson === null) return { record: undefined };
    const entry = JSON.parse(entryJson) as HashEntry;
    if (entry.expiresAt !== undefined && entry.expiresAt <= Date.now()) return { record: undefined };
    const keyJson = await this.call((redis) => redis.get(this.at(`key:${entry.keyId}`)));
    if (keyJson === null) return { record: undefined };
    return { record: recordOf(JSON.parse(keyJson) as ManagedKey), ...(entry.expiresAt === undefined ? {} : { expiresAt: entry.expiresAt }) };
  }

  /**
   * Reads the key, works out the change, and writes it with its audit entry in one script that
   * first checks the key is still as read (another instance may have changed it meanwhile: then
   * it starts again). A revoked key is never changed again (revoking it again answers it as it is).
   */
  private async change(
    id: string,
    action: Exclude<AuditAction, 'create'>,
    actor: Actor,
    work: (before: ManagedKey, now: number, secrets: KeySecrets) => { after: ManagedKey; secrets?: KeySecrets; hashes?: HashChange[] },
  ): Promise<ManagedKey | undefined> {
    for (let attempt = 0; attempt < CHANGE_ATTEMPTS; attempt++) {
      const [beforeJson, secretsJson] = await this.call((redis) => redis.mget(this.at(`key:${id}`), this.at(`secrets:${id}`)));
      if (beforeJson === null || beforeJson === undefined) return undefined;
      const before = JSON.parse(beforeJson) as ManagedKey;
      if (before.revokedAt !== undefined) {
        if (action === 'revoke') return before;
        throw new KeyRevokedError(id);
      }
      const now = Date.now();
      const { after, secrets, hashes = [] } = work(before, now, JSON.parse(secretsJson ?? 'null') as KeySecrets);
      const done = await this.call((redis) =>
        redis.eval(
          CHANGE,
          6 + hashes.length,
          this.at(`key:${id}`),
          this.at(`secrets:${id}`),
          this.at('active'),
          ...this.auditKeys(id),
          ...hashes.map((change) => this.at(`hash:${change.hash}`)),
          beforeJson,
          JSON.stringify(after),
          secrets ? JSON.stringify(secrets) : '',
          action === 'revoke' ? id : '',
          JSON.stringify(auditEntry('', now, actor, action, before, after)),
          this.auditSize,
          this.channel,
          id,
          ...hashes.flatMap((change) => [change.value ? JSON.stringify(change.value) : '', change.ttlMs ?? 0]),
        ),
      );
      this.cache.clear();
      if (done === 1) return after;
      await new Promise((resolve) => setTimeout(resolve, Math.random() * CHANGE_BACKOFF_MS * (attempt + 1)));
    }
    throw new Error(`RedisKeyStore: the key ${id} kept changing under this change; try again`);
  }

  /**
   * A connection of its own in subscriber mode (ioredis subscribes again after a reconnection).
   * Each message empties the cache, and so does each reconnection: messages may have been missed.
   */
  private subscribe(): void {
    const subscriber = duplicateForSubscribing(this.connection.redis, 'key-store');
    this.subscriber = subscriber;
    let warned = false;
    subscriber.on('error', (error: unknown) => {
      this.cache.clear();
      if (warned || this.closed) return;
      warned = true;
      this.logger.warn('RedisKeyStore: the key-change subscription lost Redis (it reconnects)', {
        error: error instanceof Error ? error.message : String(error),
      });
    });
    subscriber.on('node error', () => {});
    subscriber.on('ready', () => {
      warned = false;
      this.cache.clear();
    });
    subscriber.on('message', (channel: string) => {
      if (channel === this.channel) this.cache.clear();
    });
    subscriber.subscribe(this.channel).catch(() => {});
  }
}

/** A hash key to write (`value`, expiring after `ttlMs` when given) or, without a value, to delete. */
interface HashChange {
  hash: string;
  value?: HashEntry | undefined;
  ttlMs?: number | undefined;
}

/** The audit part of both scripts: KEYS[a], KEYS[a+1], KEYS[a+2] = audit, audit:<id>, audit:seq; the entry numbered, both lists capped. */
const AUDIT = `local function audit(a, entry, cap)
  local seq = redis.call('INCR', KEYS[a + 2])
  local member = seq .. ':' .. entry
  redis.call('ZADD', KEYS[a], seq, member)
  redis.call('ZADD', KEYS[a + 1], seq, member)
  redis.call('ZREMRANGEBYRANK', KEYS[a], 0, -cap - 1)
  redis.call('ZREMRANGEBYRANK', KEYS[a + 1], 0, -cap - 1)
end`;

/**
 * KEYS: key, hash, secrets, all, active, keys:seq, audit, audit:<id>, audit:seq.
 * ARGV: key JSON, hash entry JSON, secrets JSON, id, audit entry JSON, audit cap, channel.
 */
const CREATE = `${AUDIT}
local seq = redis.call('INCR', KEYS[6])
redis.call('SET', KEYS[1], ARGV[1])
redis.call('SET', KEYS[2], ARGV[2])
redis.call('SET', KEYS[3], ARGV[3])
redis.call('ZADD', KEYS[4], seq, ARGV[4])
redis.call('ZADD', KEYS[5], seq, ARGV[4])
audit(7, ARGV[5], tonumber(ARGV[6]))
redis.call('PUBLISH', ARGV[7], ARGV[4])
return 1`;

/**
 * KEYS: key, secrets, active, audit, audit:<id>, audit:seq, then hash keys to change.
 * ARGV: key JSON as read, key JSON to write, secrets JSON ('' to keep), id to drop from active
 * ('' to keep), audit entry JSON, audit cap, channel, id, then per hash key: entry JSON ('' to
 * delete) and ms to live (0: no expiry). 0 when the key is no longer as read.
 */
const CHANGE = `${AUDIT}
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
if ARGV[3] ~= '' then redis.call('SET', KEYS[2], ARGV[3]) end
if ARGV[4] ~= '' then redis.call('ZREM', KEYS[3], ARGV[4]) end
for i = 7, #KEYS do
  local value, ttl = ARGV[9 + (i - 7) * 2], tonumber(ARGV[10 + (i - 7) * 2])
  if value == '' then redis.call('DEL', KEYS[i])
  elseif ttl > 0 then redis.call('SET', KEYS[i], value, 'PX', ttl)
  else redis.call('SET', KEYS[i], value) end
end
audit(4, ARGV[5], tonumber(ARGV[6]))
redis.call('PUBLISH', ARGV[7], ARGV[8])
return 1`;
