import * as v from 'valibot';
import { GatewayError, isGatewayError } from '../errors.js';

/** What the gateway keeps of one upstream session within a client session. */
export interface UpstreamState {
  sessionId?: string | undefined;
  protocolVersion?: string | undefined;
  /** Why the upstream could not be initialized: it is left out of this session's lists. */
  down?: string | undefined;
}

/** What the gateway keeps of one client session: whose it is and the upstream sessions it maps to. */
export interface McpSessionRecord {
  keyId: string;
  /** The protocol version negotiated with the client. */
  protocolVersion: string;
  createdAt: number;
  upstream: Record<string, UpstreamState>;
  /** The least severe upstream log level the client asked for (`logging/setLevel`); unset: every level. */
  logLevel?: string | undefined;
}

/**
 * Sessions by id, shared by every instance that uses the same store. A session unused for the
 * store's TTL is gone: `get` renews it (an idle expiry, not one from its start).
 */
export interface McpSessionStore {
  get(id: string): Promise<McpSessionRecord | undefined>;
  /** Writes a new session (at `initialize`). */
  set(id: string, record: McpSessionRecord): Promise<void>;
  /**
   * Writes a session only while it exists: a request that renewed an upstream session or the log
   * level must not bring back a session a DELETE on another instance has just ended.
   */
  update(id: string, record: McpSessionRecord): Promise<void>;
  delete(id: string): Promise<void>;
  /**
   * Tells the other instances sharing the store that a client cancelled a call this instance is
   * not running (it may run on one of them). Fire and forget: never throws, never waits. Optional:
   * without it a cancellation reaches only the calls of the instance it arrives at.
   */
  publishCancel?(notice: McpCancelNotice): void;
  /** Hears the cancellations the other instances publish; returns the unsubscribe function. */
  subscribeCancels?(listener: (notice: McpCancelNotice) => void): () => void;
}

/** A client's `notifications/cancelled`, on its way to the instance running the call it names. */
export interface McpCancelNotice {
  sessionId: string;
  requestId: string | number;
  reason?: string | undefined;
}

/**
 * How long a session lives without a request: a day, so an agent left idle over a meeting keeps
 * its session (peers use 30–60 min; a client whose session expired gets a 404 and initializes again).
 */
export const DEFAULT_MCP_SESSION_TTL_SECONDS = 24 * 3600;

/** Most sessions one process keeps in memory: a client opening sessions in a loop evicts the least recently used. */
export const DEFAULT_MCP_MAX_SESSIONS = 10_000;
/** Most sessions of one key kept in memory: past it the key's own least recently used goes, not another key's. */
export const DEFAULT_MCP_MAX_SESSIONS_PER_KEY = 1_000;

export interface MemoryMcpSessionStoreOptions {
  /** A session unused this long is forgotten, in seconds. Default a day. */
  ttlSeconds?: number | undefined;
  /** Most sessions kept; past it the least recently used goes. Default 10,000. */
  maxSessions?: number | undefined;
  /** Most sessions of one key; past it that key's least recently used goes. Default 1,000. */
  maxSessionsPerKey?: number | undefined;
}

/** In this process only (the default): bounded in count, in all and per key; idle sessions expire. */
export class MemoryMcpSessionStore implements McpSessionStore {
  /** In order of last use, oldest first: eviction and expiry both start at the head. */
  private readonly sessions = new Map<string, { record: McpSessionRecord; expiresAt: number }>();
  /** Sessions held by each key id. */
  private readonly perKey = new Map<string, number>();
  private readonly ttlMs: number;
  private readonly maxSessions: number;
  private readonly maxSessionsPerKey: number;

  constructor(options: MemoryMcpSessionStoreOptions = {}) {
    const ttlSeconds = options.ttlSeconds ?? DEFAULT_MCP_SESSION_TTL_SECONDS;
    this.maxSessions = options.maxSessions ?? DEFAULT_MCP_MAX_SESSIONS;
    this.maxSessionsPerKey = options.maxSessionsPerKey ?? DEFAULT_MCP_MAX_SESSIONS_PER_KEY;
    for (const [name, value] of Object.entries({ ttlSeconds, maxSessions: this.maxSessions, maxSessionsPerKey: this.maxSessionsPerKey })) {
      if (!Number.isInteger(value) || value < 1) throw new TypeError(`MemoryMcpSessionStore: ${name} must be a positive integer`);
    }
    this.ttlMs = ttlSeconds * 1000;
  }

  async get(id: string) {
    const entry = this.sessions.get(id);
    if (!entry) return undefined;
    this.drop(id);
    if (entry.expiresAt <= Date.now()) return undefined;
    this.keep(id, entry.record);
    return entry.record;
  }

  async set(id: string, record: McpSessionRecord) {
    this.drop(id);
    this.keep(id, record);
  }

  async update(id: string, record: McpSessionRecord) {
    const entry = this.sessions.get(id);
    if (!entry || entry.expiresAt <= Date.now()) return;
    this.drop(id);
    this.keep(id, record);
  }

  async delete(id: string) {
    this.drop(id);
  }

  /** Stores `id` as the most recently used, after dropping the expired and the oldest past the bounds. */
  private keep(id: string, record: McpSessionRecord): void {
    const now = Date.now();
    for (const [oldest, entry] of this.sessions) {
      if (entry.expiresAt > now && this.sessions.size < this.maxSessions) break;
      this.drop(oldest);
    }
    // A key opening sessions in a loop pushes out its own, never another key's.
    if ((this.perKey.get(record.keyId) ?? 0) >= this.maxSessionsPerKey) {
      for (const [oldest, entry] of this.sessions) {
        if (entry.record.keyId !== record.keyId) continue;
        this.drop(oldest);
        break;
      }
    }
    this.sessions.set(id, { record, expiresAt: now + this.ttlMs });
    this.perKey.set(record.keyId, (this.perKey.get(record.keyId) ?? 0) + 1);
  }

  private drop(id: string): void {
    const entry = this.sessions.get(id);
    if (!entry) return;
    this.sessions.delete(id);
    const left = (this.perKey.get(entry.record.keyId) ?? 1) - 1;
    if (left > 0) this.perKey.set(entry.record.keyId, left);
    else this.perKey.delete(entry.record.keyId);
  }
}

/**
 * The store as the route uses it: one that cannot answer (its Redis unreachable) is a 503 the
 * client may retry, as an unreachable key store is, never a 500; the cause is logged.
 */
export function unavailableAs503(store: McpSessionStore): McpSessionStore {
  const guarded = async <T>(work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (error) {
      if (isGatewayError(error)) throw error;
      throw new GatewayError({
        status: 503,
        message: 'MCP sessions cannot be reached right now; try again shortly.',
        code: 'mcp_session_store_unavailable',
        headers: { 'retry-after': '1' },
        detail: `mcp session store: ${error instanceof Error ? error.message : String(error)}`,
        cause: error,
      });
    }
  };
  return {
    get: (id) => guarded(() => store.get(id)),
    set: (id, record) => guarded(() => store.set(id, record)),
    update: (id, record) => guarded(() => store.update(id, record)),
    delete: (id) => guarded(() => store.delete(id)),
    ...(store.publishCancel ? { publishCancel: (notice: McpCancelNotice) => store.publishCancel?.(notice) } : {}),
    ...(store.subscribeCancels ? { subscribeCancels: (listener: (notice: McpCancelNotice) => void) => store.subscribeCancels!(listener) } : {}),
  };
}

const optionalText = v.optional(v.string());

/**
 * A record read back from a shared store: anything else (corrupted, hand-edited) is no session.
 * Fields it does not check are kept, so a field added to the record survives the round trip.
 */
const SessionRecordSchema = v.looseObject({
  keyId: v.string(),
  protocolVersion: v.string(),
  createdAt: v.number(),
  // valibot's record takes an array (as `{ "0": … }`).
  upstream: v.pipe(
    v.custom<unknown>((value) => !Array.isArray(value)),
    v.record(v.string(), v.looseObject({ sessionId: optionalText, protocolVersion: optionalText, down: optionalText })),
  ),
});

/** Longest cancellation message read from a shared store's channel: ids and a short reason. */
const CANCEL_MESSAGE_MAX = 2048;

const CancelNoticeSchema = v.object({
  sessionId: v.pipe(v.string(), v.maxLength(128)),
  requestId: v.union([v.pipe(v.string(), v.maxLength(256)), v.number()]),
  reason: v.optional(v.pipe(v.string(), v.maxLength(500))),
});

/** A cancellation read from a shared store's channel, or `undefined` when it is not one. */
export function parseCancelNotice(message: string): McpCancelNotice | undefined {
  return message.length > CANCEL_MESSAGE_MAX ? undefined : parseJsonAs(CancelNoticeSchema, message);
}

/** The record in `json`, or `undefined` when it is not one. */
export function parseSessionRecord(json: string): McpSessionRecord | undefined {
  return parseJsonAs(SessionRecordSchema, json);
}

/** `json` parsed and checked by `schema`, or `undefined` when it is not JSON or not of that shape. */
function parseJsonAs<S extends v.GenericSchema>(schema: S, json: string): v.InferOutput<S> | undefined {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return undefined;
  }
  const result = v.safeParse(schema, value);
  return result.success ? result.output : undefined;
}
