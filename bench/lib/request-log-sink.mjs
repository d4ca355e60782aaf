// The request log a bench process writes to: `memory` (MemoryRequestLog, the harness's stand-in)
// or `postgres` (PostgresRequestLog from infergate/postgres, at a URL, in a schema of the run's
// own). Both come from the BUILT library (dist/), imported through a variable as
// bench/gateway-server.mjs does, so tsc types them from src/ on a clone without a build.

const dist = new URL('../../dist/', import.meta.url).href;

/**
 * @typedef {object} SinkSettings
 * @property {'memory' | 'postgres'} kind
 * @property {string | undefined} [url]     Postgres only
 * @property {string | undefined} [schema]  Postgres only
 * @property {'drop' | 'wait'} [overflow]  Postgres only; default the sink's
 * @property {number} [queueSize]  Postgres only; default the sink's
 * @property {string} [distIndex]  the build's index.js (INFERGATE_DIST), default dist/index.js
 */

/**
 * Opens the request log; a Postgres one with every other setting at its default.
 * @param {SinkSettings} settings
 * @returns {Promise<import('infergate').RequestLog>}
 */
export async function openRequestLog(settings) {
  if (settings.kind === 'memory') {
    /** @type {typeof import('infergate')} */
    const { MemoryRequestLog } = await import(settings.distIndex ?? `${dist}index.js`);
    return new MemoryRequestLog({ size: 1000 });
  }
  /** @type {typeof import('infergate/postgres')} */
  const { PostgresRequestLog } = await import((settings.distIndex ?? `${dist}index.js`).replace(/index\.js$/, 'postgres.js'));
  return new PostgresRequestLog({
    url: settings.url,
    schema: settings.schema,
    ...(settings.overflow ? { overflow: settings.overflow } : {}),
    ...(settings.queueSize ? { queueSize: settings.queueSize } : {}),
  });
}
