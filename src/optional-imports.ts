import { ConfigError } from './config.js';

/**
 * The standalone server's optional entries, imported only when the config names them: `ioredis`
 * and `pg` are optional peer dependencies, so a server without Redis or PostgreSQL needs neither.
 */

export async function importRedis(): Promise<typeof import('./redis.js')> {
  try {
    return await import('./redis.js');
  } catch (error) {
    throw new ConfigError(`Redis stores need the ioredis package (npm install ioredis): ${(error as Error).message}`);
  }
}

export async function importPostgres(): Promise<typeof import('./postgres.js')> {
  try {
    return await import('./postgres.js');
  } catch (error) {
    throw new ConfigError(`PostgreSQL stores need the pg package (npm install pg): ${(error as Error).message}`);
  }
}
