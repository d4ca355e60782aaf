import pg from 'pg';

/**
 * What the Postgres stores talk to: a `pg` pool, and the schema their tables live in. `pg`
 * (node-postgres) is an optional peer dependency, needed only by `infergate/postgres`.
 */

export interface PostgresConnectionOptions {
  /** A pool of the host's (not closed by the store), or… */
  pool?: pg.Pool | undefined;
  /** …a connection string (`postgres://user:pass@host:5432/db`): the store opens and closes its own pool. */
  url?: string | undefined;
  /** Schema of the tables (made if missing). Default `public`. */
  schema?: string | undefined;
  /** Most connections of a pool the store opens. Default 10. */
  maxConnections?: number | undefined;
}

export type PostgresTuning = Pick<pg.PoolConfig, 'connectionTimeoutMillis' | 'query_timeout'>;

/** A pool, the schema, and whether the pool is ours to close. */
export class PostgresConnection {
  readonly pool: pg.Pool;
  readonly schema: string;
  private readonly owned: boolean;

  /** `tuning`: pool settings a store chooses for a pool it opens (timeouts: a lookup must fail, not hang, when the server is away). */
  constructor(options: PostgresConnectionOptions, owner: string, tuning: PostgresTuning = {}) {
    if ((options.pool === undefined) === (options.url === undefined)) throw new TypeError(`${owner}: give exactly one of pool and url`);
    this.schema = options.schema ?? 'public';
    if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(this.schema)) throw new TypeError(`${owner}: schema must be a plain SQL identifier, got "${this.schema}"`);
    this.owned = options.pool === undefined;
    this.pool = options.pool ?? new pg.Pool({ ...tuning, connectionString: options.url, max: options.maxConnections ?? 10 });
    // A pool's idle client that loses its server emits 'error': without a listener that ends the process.
    if (this.owned) this.pool.on('error', () => {});
  }

  /** A table's name, schema-qualified and quoted: `"public"."infergate_keys"`. */
  table(name: string): string {
    return `"${this.schema}"."${name}"`;
  }

  /**
   * Runs the statements that make the tables, once at a time across every instance (an advisory
   * lock on the schema), each written to be run again (`IF NOT EXISTS`).
   */
  async migrate(statements: readonly string[]): Promise<void> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`infergate:${this.schema}`]);
      await client.query(`CREATE SCHEMA IF NOT EXISTS "${this.schema}"`);
      for (const statement of statements) await client.query(statement);
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }

  /** Runs `work` in one transaction on one client. */
  async transaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }

  /** Closes the pool when the store opened it. */
  async close(): Promise<void> {
    if (this.owned) await this.pool.end();
  }
}
