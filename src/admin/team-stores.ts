import type { KeyStoreConfig, RequestLogConfig } from '../config.js';
import { MemoryRequestLog } from '../logs/memory-request-log.js';
import type { RequestLog } from '../logs/request-log.js';
import { importPostgres, importRedis } from '../optional-imports.js';
import type { UsageStore } from '../state/usage-store.js';
import type { ManagedKeyStore } from './keys/managed-key-store.js';
import { MemoryKeyStore } from './keys/memory-key-store.js';

/**
 * The standalone server's stores for running it for a team (docs/admin.md, "Standalone server"):
 * where keys made at run time live and where each request's row goes, opened from the config
 * file, with the start-up lines that say where.
 */
export interface TeamStores {
  /** Keys made at run time: the configured store, else one in memory when the admin API is served; none otherwise. */
  keys: ManagedKeyStore | undefined;
  /** The request log: the configured one, else a ring in memory when the admin API is served (so the dashboard has data). */
  log: RequestLog | undefined;
  /** `GET /v1/usage` from the Postgres log's daily rollups. */
  usageStore: UsageStore | undefined;
  /** What the start-up says of them. */
  lines: string[];
}

export async function openTeamStores(
  keyStore: KeyStoreConfig | undefined,
  requestLog: RequestLogConfig | undefined,
  adminServed: boolean,
): Promise<TeamStores> {
  const lines: string[] = [];
  let keys: ManagedKeyStore | undefined;
  if (keyStore?.type === 'postgres') {
    const { PostgresKeyStore } = await importPostgres();
    keys = new PostgresKeyStore({ url: keyStore.url, schema: keyStore.schema });
    lines.push(`Keys made at run time: in PostgreSQL (${databaseOf(keyStore.url)}, schema ${keyStore.schema ?? 'public'})`);
  } else if (keyStore?.type === 'redis') {
    const { RedisKeyStore } = await importRedis();
    keys = new RedisKeyStore(keyStore);
    lines.push(`Keys made at run time: in Redis${keyStore.keyPrefix ? ` (prefix ${keyStore.keyPrefix})` : ''}`);
  } else if (keyStore || adminServed) {
    keys = new MemoryKeyStore();
    lines.push('Keys made at run time: in memory (lost on restart; set "keyStore" in the config to keep them)');
  }

  let log: RequestLog | undefined;
  let usageStore: UsageStore | undefined;
  if (requestLog?.type === 'postgres') {
    const { PostgresRequestLog } = await importPostgres();
    const { type: _type, content: _content, ...settings } = requestLog;
    const postgresLog = new PostgresRequestLog(settings);
    log = postgresLog;
    usageStore = postgresLog.usageStore();
    lines.push(`Request log: in PostgreSQL (${databaseOf(requestLog.url)}, schema ${requestLog.schema ?? 'public'}; GET /v1/usage reads its daily totals)`);
  } else if (requestLog || adminServed) {
    const size = requestLog?.size ?? 10_000;
    log = new MemoryRequestLog({ size });
    lines.push(`Request log: in memory (the last ${size} requests, lost on restart)`);
  }
  return { keys, log, usageStore, lines };
}

/** `host:port/db` of a database URL: where, without the user or password. */
function databaseOf(url: string): string {
  if (!URL.canParse(url)) return 'the configured database';
  const { host, pathname } = new URL(url);
  return `${host}${pathname}`;
}
