import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { freePort } from './serve.js';

/**
 * A real PostgreSQL for the store, log and admin suites: `POSTGRES_URL` (`.ci/run` starts one on
 * 127.0.0.1:5433), or, outside CI, one started here with `.ci/postgres` when Debian's
 * `postgresql` is installed. Never skipped: in CI a missing server fails the suite, and locally
 * so does a machine without PostgreSQL (install it, or set POSTGRES_URL).
 */
export interface TestDatabase {
  url: string;
  /** A schema of this suite's own, made empty: pass it as the stores' `schema`. */
  schema: string;
  /** A client on the database for checks (closed by `close`). */
  pool: pg.Pool;
  /** Drops the schema, closes the pool, stops a server started here. */
  close(): Promise<void>;
}

let started: { url: string; dir: string } | undefined;

export async function testDatabase(): Promise<TestDatabase> {
  const url = process.env.POSTGRES_URL ?? (await startPostgres());
  const schema = `t_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  pool.on('error', () => {});
  await pool.query(`CREATE SCHEMA "${schema}"`);
  return {
    url,
    schema,
    pool,
    async close() {
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
      await pool.end();
    },
  };
}

async function startPostgres(): Promise<string> {
  if (started) return started.url;
  if (process.env.CI) throw new Error('POSTGRES_URL is not set: in CI, .ci/run starts PostgreSQL and sets it.');
  const installed = existsSync('/usr/lib/postgresql') && readdirSync('/usr/lib/postgresql').length > 0;
  if (!installed) throw new Error("These tests need PostgreSQL: set POSTGRES_URL, or install Debian's postgresql (apt-get install postgresql).");
  const parent = mkdtempSync(join(tmpdir(), 'infergate-pg-'));
  chmodSync(parent, 0o755);
  const script = fileURLToPath(new URL('../../.ci/postgres', import.meta.url));
  const url = execFileSync(script, ['start', join(parent, 'pg'), String(await freePort())], { encoding: 'utf8' }).trim();
  started = { url, dir: join(parent, 'pg') };
  process.once('exit', () => {
    try {
      execFileSync(script, ['stop', join(parent, 'pg')]);
    } catch {}
  });
  return url;
}
