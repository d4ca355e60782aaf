// The scale-out bench's failing deployment (bench/scale-out.mjs, the reroute check): Chat
// Completions JSON like the mock upstream, at `/p<i>/v1/chat/completions` where `<i>` is the
// gateway process that called (each process's baseURL names it). Told to fail one process's
// calls (`fail`), it answers them 500, and it logs when every call came, from which process, so
// that the runner can tell when each process stopped calling it, all on this one clock.
import http from 'node:http';
import { announce, serveIpc } from './lib/ipc.mjs';
import { answerErrorStatus } from './lib/mock-faults.mjs';
import { jsonBody } from './lib/wire.mjs';

const answer = jsonBody('chat', 40);
/** The process whose calls fail, or -1. */
let failing = -1;
/** @type {Array<{ at: number, process: number, failed: boolean }>} */
let calls = [];

/** Now, in ms since the epoch, to the microsecond. */
const now = () => performance.timeOrigin + performance.now();

const server = http.createServer({ noDelay: true, keepAlive: true, requestTimeout: 0 }, (req, res) => {
  req.resume();
  req.on('end', () => {
    const match = /^\/p(\d+)\/v1\/chat\/completions$/.exec((req.url ?? '').split('?')[0] ?? '');
    if (!match) {
      res.writeHead(404).end();
      return;
    }
    const caller = Number(match[1]);
    const failed = caller === failing;
    calls.push({ at: now(), process: caller, failed });
    if (failed) answerErrorStatus(res, 500, false);
    else {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': answer.length, 'x-request-id': 'req_flaky' });
      res.end(answer);
    }
  });
});
server.keepAliveTimeout = 120_000;

serveIpc({
  /** From now on, fails the calls of process `args.process` (-1: none). Returns the time it started. */
  fail(/** @type {{ process: number }} */ args) {
    failing = args.process;
    return now();
  },
  /** The calls logged since the last `reset`. */
  calls: () => calls,
  reset() {
    failing = -1;
    calls = [];
    return true;
  },
  shutdown() {
    setImmediate(() => process.exit(0));
    return true;
  },
});

server.listen(0, '127.0.0.1', () => announce({ port: /** @type {import('node:net').AddressInfo} */ (server.address()).port }));
