/**
 * `infergate/postgres`: the key store and the request log on PostgreSQL, so keys made at run
 * time and every request's row outlive restarts and are shared by every instance. `pg`
 * (node-postgres) is an optional peer dependency, needed only by this entry.
 */
export { PostgresConnection, type PostgresConnectionOptions } from './postgres/connection.js';
export { PostgresKeyStore, type PostgresKeyStoreOptions } from './admin/keys/postgres-key-store.js';
export { PostgresRequestLog, type PostgresRequestLogOptions } from './logs/postgres-request-log.js';
