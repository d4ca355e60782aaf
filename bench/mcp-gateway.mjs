// The gateway of bench/mcp-overhead.mjs: the BUILT library (dist/) on node:http, its /mcp serving
// the bench upstream as the server `up`, one key allowed every tool, no logger.
// Usage: started by bench/mcp-overhead.mjs with the upstream's origin (it needs an IPC channel).
import http from 'node:http';
import { announce, serveIpc } from './lib/ipc.mjs';

const dist = '../dist/';
/** @type {typeof import('infergate')} */
const { createGateway } = await import(`${dist}index.js`);

const gateway = createGateway({
  providers: {},
  models: [],
  keys: [{ key: 'sk-bench', id: 'bench', mcp: ['*'] }],
  logger: false,
  mcp: { servers: { up: { url: `${process.argv[2]}/mcp` } } },
});
const server = http.createServer(gateway);
server.listen(0, '127.0.0.1', () => {
  serveIpc({});
  announce({ port: /** @type {import('node:net').AddressInfo} */ (server.address()).port });
});
