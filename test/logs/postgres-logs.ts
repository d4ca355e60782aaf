import { createServer, type Socket } from 'node:net';
import { afterAll, beforeAll } from 'vitest';
import { PostgresRequestLog, type PostgresRequestLogOptions } from '../../src/logs/postgres-request-log.js';
import { testDatabase, type TestDatabase } from '../helpers/postgres.js';
import { recordingLogger } from '../helpers/recording-logger.js';

/** The PostgreSQL request log suites' setup: a database, a schema per log, every log closed and schema dropped at the end. */
export interface PostgresLogSuite {
  /** The database (once the suite started). */
  readonly db: TestDatabase;
  /** A schema name of its own, dropped at the end. */
  newSchema(): string;
  /** A log on a schema of its own (the tables made by the log), or on `schema`. */
  openLog(options?: Partial<PostgresRequestLogOptions>, schema?: string): PostgresRequestLog;
}

/** Registers the suite's `beforeAll`/`afterAll`: call it at a test file's top level. */
export function postgresLogSuite(): PostgresLogSuite {
  let db: TestDatabase | undefined;
  let schemas = 0;
  const opened: PostgresRequestLog[] = [];
  beforeAll(async () => {
    db = await testDatabase();
  });
  afterAll(async () => {
    await Promise.all(opened.map((log) => log.close().catch(() => {})));
    for (let n = 1; n <= schemas; n++) await db?.pool.query(`DROP SCHEMA IF EXISTS "${db.schema}_${n}" CASCADE`);
    await db?.close();
  });
  const suite: PostgresLogSuite = {
    get db() {
      if (!db) throw new Error('the database is not started yet');
      return db;
    },
    newSchema: () => `${suite.db.schema}_${++schemas}`,
    openLog(options = {}, schema = suite.newSchema()) {
      const log = new PostgresRequestLog({ url: suite.db.url, schema, logger: recordingLogger().logger, retryDelayMs: 1, ...options });
      opened.push(log);
      return log;
    },
  };
  return suite;
}

export const schemaOf = (log: PostgresRequestLog): string => (log as unknown as { connection: { schema: string } }).connection.schema;

/** A server that accepts connections and never answers: a database that stopped answering. */
export async function blackHole(): Promise<{ url: string; close(): void }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => void sockets.add(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/infergate`,
    close() {
      for (const socket of sockets) socket.destroy();
      server.close();
    },
  };
}
