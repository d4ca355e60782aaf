import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from './child-host.js';

const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { exports: Record<string, unknown> };
const adapters = readdirSync(join(repoRoot, 'adapters')).map((file) => file.replace(/\.ts$/, ''));

describe('one subpath export per adapter', () => {
  it.each(adapters)('infergate/%s is exported with its types', (name) => {
    expect(pkg.exports[`./${name}`]).toEqual({ types: `./dist/${name}.d.ts`, import: `./dist/${name}.js` });
  });

  it('every adapter resolves by its package name from the build, as users import it', () => {
    // The package refers to itself through `exports` (dist/ is built by the global setup).
    const script = `const names = ${JSON.stringify(adapters)};
      const loaded = await Promise.all(names.map((name) => import('infergate/' + name)));
      console.log(JSON.stringify(Object.fromEntries(names.map((name, i) => [name, Object.keys(loaded[i]).sort()]))));`;
    const output = execFileSync(process.execPath, ['--input-type=module', '--eval', script], { cwd: repoRoot, encoding: 'utf8' });
    expect(JSON.parse(output)).toEqual({
      bun: ['serve'],
      deno: ['serve'],
      express: ['expressMiddleware'],
      fastify: ['fastifyPlugin'],
      next: ['nextRouteHandlers'],
      node: ['createNodeServer', 'listen'],
    });
  });
});
