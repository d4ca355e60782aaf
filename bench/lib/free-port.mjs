// A free loopback port, for a throwaway server a bench starts (Redis, PostgreSQL).
import net from 'node:net';

/** @returns {Promise<number>} */
export function freePort() {
  return new Promise((resolvePort, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = /** @type {net.AddressInfo} */ (server.address());
      server.close(() => resolvePort(port));
    });
  });
}
