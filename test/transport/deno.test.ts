import { join } from 'node:path';
import { listeningLine, repoRoot, spawnHost, upstreamEnv } from './child-host.js';
import { transportSuite } from './suite.js';

// The real Deno (from the `deno` npm package) runs the example's TypeScript as it is, with the
// same permissions as `npm run example:deno`.
transportSuite({
  name: 'Deno',
  startTimeoutMs: 30_000,
  start: (options) =>
    spawnHost({
      command: join(repoRoot, 'node_modules/.bin/deno'),
      args: ['run', '--allow-net', '--allow-env', '--allow-read', '--config', 'examples/deno/deno.json', 'examples/deno/server.ts'],
      env: { PORT: '0', NO_COLOR: '1', ...upstreamEnv(options) },
      mount: '/ai',
      ready: listeningLine,
      timeoutMs: 20_000,
    }),
});
