import { defineConfig } from 'tsup';

/** One subpath export per host adapter: `infergate/express` → `adapters/express.ts`. */
const adapters = Object.fromEntries(['express', 'fastify', 'next', 'bun', 'deno', 'node'].map((name) => [name, `adapters/${name}.ts`]));

export default defineConfig([
  {
    entry: {
      index: 'src/index.ts',
      cli: 'src/cli.ts',
      // `infergate/redis`: the Redis task store, limit engine and response store (ioredis is an optional peer dependency).
      redis: 'src/redis.ts',
      // `infergate/metrics`: Prometheus text for hosts without an OpenTelemetry SDK (metricsHandler).
      metrics: 'src/metrics.ts',
      // `infergate/postgres`: the key store and request log on PostgreSQL (pg is an optional peer dependency).
      postgres: 'src/postgres.ts',
      ...adapters,
    },
    format: ['esm'],
    target: 'node20',
    platform: 'node',
    dts: { entry: { index: 'src/index.ts', redis: 'src/redis.ts', metrics: 'src/metrics.ts', postgres: 'src/postgres.ts', ...adapters } },
    sourcemap: true,
    // dist/dashboard is the other build's, made at the same time.
    clean: ['!dashboard/**'],
    splitting: true,
  },
  {
    // The admin dashboard (docs/admin.md, "Dashboard"): one script for the browser with Preact, htm
    // and uPlot inside, its CSS (uPlot's too) beside it, and index.html from public/.
    entry: { 'assets/app': 'src/admin/dashboard/app.ts' },
    outDir: 'dist/dashboard',
    publicDir: 'src/admin/dashboard/public',
    format: ['esm'],
    platform: 'browser',
    target: 'es2022',
    minify: true,
    noExternal: ['preact', 'htm', 'uplot'],
    dts: false,
    sourcemap: false,
    clean: true,
    splitting: false,
  },
]);
