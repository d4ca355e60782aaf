import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RunningHost } from './suite.js';

/** Waits for a Node server (Express's, Fastify's, node:http's) to listen; `close` drops open connections too. */
export async function listening(server: Server, mount: string): Promise<RunningHost> {
  if (!server.listening) await new Promise<void>((resolve, reject) => server.once('listening', resolve).once('error', reject));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    mount,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A listening Fastify app as a host; `close` drops open connections too (Fastify closes idle ones only). */
export function fastifyHost(app: { close(): Promise<unknown>; server: Server }, origin: string, mount: string): RunningHost {
  return {
    origin,
    mount,
    async close() {
      const closing = app.close();
      app.server.closeAllConnections();
      await closing;
    },
  };
}
