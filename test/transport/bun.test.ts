import { join } from 'node:path';
import { listeningLine, repoRoot, spawnHost, upstreamEnv } from './child-host.js';
import { transportSuite } from './suite.js';

// The real Bun (from the `bun` npm package) runs the example's TypeScript as it is.
transportSuite({
  name: 'Bun',
  startTimeoutMs: 30_000,
  start: (options) =>
    spawnHost({
      command: join(repoRoot, 'node_modules/.bin/bun'),
      args: ['examples/bun/server.ts'],
      env: { PORT: '0', ...upstreamEnv(options) },
      mount: '/ai',
      ready: listeningLine,
      timeoutMs: 20_000,
    }),
});
