// The PostgreSQL a bench run writes to: POSTGRES_URL when set, else a throwaway one started with
// .ci/postgres on a free loopback port (stopped and removed when the run ends). Each run works in a
// schema of its own, dropped at the end, so repeated runs and other users of the server do not mix.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './free-port.mjs';
import pg from 'pg';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * A Postgres URL and a fresh schema on it; `close()` drops the schema (and stops a server started here).
 * @returns {Promise<{ url: string, schema: string, started: boolean, pool: pg.Pool, close: () => Promise<void> }>}
 */
export async function benchDatabase() {
  let url = process.env.POSTGRES_URL;
  /** @type {string | undefined} */
  let dir;
  if (!url) {
    dir = mkdtempSync(join(tmpdir(), 'infergate-bench-pg-'));
    // As root the server runs as the `postgres` user, which must reach the folder.
    chmodSync(dir, 0o755);
    url = execFileSync(join(root, '.ci/postgres'), ['start', join(dir, 'pg'), String(await freePort())], { encoding: 'utf8' }).trim();
  }
  const schema = `bench_rl_${process.pid}_${Date.now().toString(36)}`;
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  pool.on('error', () => {});
  return {
    url,
    schema,
    started: dir !== undefined,
    pool,
    async close() {
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
      await pool.end();
      if (dir) {
        execFileSync(join(root, '.ci/postgres'), ['stop', join(dir, 'pg')]);
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
