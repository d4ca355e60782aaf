// The scale-out bench's client: closed-loop workers spreading requests over several gateway
// processes in turn, as a round-robin load balancer in front of them would.
import { Connection } from './http-client.mjs';
import { exchange } from './load.mjs';

const now = () => performance.now();

/**
 * @typedef {object} PortTally
 * @property {number} port
 * @property {number} requests  answered 2xx
 * @property {number[]} latencies  of the 2xx, ms
 * @property {Record<string, number>} statuses  answers by HTTP status (`error` for no answer)
 * @property {Array<string | undefined>} watched  the `watch` header of each 2xx answer, when asked
 */

/**
 * `concurrency` workers, each sending its next request as soon as its last one is answered, to
 * the next port in turn: one counter for all of them, so request i goes to port i mod N. Each
 * worker keeps one keep-alive connection per port. Runs until `durationMs` has passed or
 * `total` requests were sent, whichever comes first. `watch` names a header to keep from each
 * 2xx answer.
 * @param {{ ports: number[], request: Buffer, concurrency: number, durationMs?: number, total?: number, watch?: string }} options
 */
export async function roundRobin({ ports, request, concurrency, durationMs = Infinity, total = Infinity, watch }) {
  /** @type {PortTally[]} */
  const tallies = ports.map((port) => ({ port, requests: 0, latencies: [], statuses: {}, watched: [] }));
  /** @type {string | undefined} */
  let firstError;
  let sent = 0;
  const started = now();
  const deadline = started + durationMs;
  /** @type {Connection[]} */
  const all = [];
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      const conns = ports.map((port) => new Connection(port));
      all.push(...conns);
      while (sent < total && now() < deadline) {
        const index = sent++ % ports.length;
        const tally = /** @type {PortTally} */ (tallies[index]);
        const t0 = now();
        /** @type {string | undefined} */
        let watched;
        const onHead = watch ? (/** @type {number} */ _status, /** @type {Record<string, string>} */ headers) => void (watched = headers[watch]) : undefined;
        const result = await exchange(/** @type {Connection} */ (conns[index]), request, onHead ? { onHead } : {});
        const status = result.error ? 'error' : String(result.status);
        tally.statuses[status] = (tally.statuses[status] ?? 0) + 1;
        if (result.error) firstError ??= result.error.message;
        else if (result.status >= 200 && result.status < 300) {
          tally.requests++;
          tally.latencies.push(now() - t0);
          if (watch) tally.watched.push(watched);
        }
      }
    }),
  );
  const elapsedMs = now() - started;
  for (const conn of all) conn.close();
  /** @type {Record<string, number>} */
  const statuses = {};
  for (const tally of tallies) for (const [status, count] of Object.entries(tally.statuses)) statuses[status] = (statuses[status] ?? 0) + count;
  return { tallies, statuses, sent, elapsedMs, firstError };
}
