import { join } from 'node:path';
import { freePort, repoRoot, spawnHost, upstreamEnv } from './child-host.js';
import { transportSuite, type RunningHost } from './suite.js';

/**
 * The example under the real `next dev` (Turbopack), in its own `.next-test` directory. Its
 * route handler imports the built package (`dist/`, built by the global setup), as a Next.js app
 * imports it from npm. `next dev` allows one server per directory: when another test run of
 * this checkout holds it, wait for it rather than fail.
 */
async function startNextDev(env: Record<string, string>): Promise<RunningHost> {
  const deadline = Date.now() + 150_000;
  for (;;) {
    const port = await freePort();
    try {
      return await spawnHost({
        command: process.execPath,
        args: [join(repoRoot, 'node_modules/next/dist/bin/next'), 'dev', 'examples/next', '--port', String(port), '--hostname', '127.0.0.1'],
        env: { NEXT_DIST_DIR: '.next-test', NEXT_TELEMETRY_DISABLED: '1', ...env },
        mount: '/api',
        ready: (output) => (/Ready in/.test(output) ? `http://127.0.0.1:${port}` : undefined),
        timeoutMs: 60_000,
      });
    } catch (error) {
      if (!/already running/.test(String(error)) || Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 5_000));
    }
  }
}

transportSuite({
  name: 'Next.js',
  startTimeoutMs: 240_000,
  async start(options) {
    const host = await startNextDev(upstreamEnv(options));
    // `next dev` compiles the route on its first request: do it now, not inside a timed case.
    // Under load its first connection is sometimes dropped while it compiles: try again.
    const deadline = Date.now() + 60_000;
    for (;;) {
      try {
        const warmup = await fetch(`${host.origin}/api/v1/models`);
        await warmup.body?.cancel();
        return host;
      } catch (error) {
        if (Date.now() > deadline) {
          await host.close();
          throw error;
        }
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
  },
});
