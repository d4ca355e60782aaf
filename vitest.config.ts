import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const root = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  resolve: {
    // The examples import the package by name, as users do; in tests that is the source (as in tsconfig's `paths`).
    alias: [
      { find: /^infergate$/, replacement: `${root}src/index.ts` },
      { find: /^infergate\/(express|fastify|next|bun|deno|node)$/, replacement: `${root}adapters/$1.ts` },
    ],
  },
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 60_000,
    globalSetup: ['test/global-setup.ts'],
  },
});
