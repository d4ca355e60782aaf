import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/**
 * Builds `dist/` once before the suite, so tests can spawn `dist/cli.js` (the real `bin`) and
 * import the package as users do. Uses tsup.config.ts with declarations skipped (they take most
 * of the build time and no test reads them; `npm run build` makes them) and without cleaning
 * `dist/` first, so a server started from it meanwhile (`npm start`, another test run) keeps its
 * files.
 */
export default function setup(): void {
  const script = "import { build } from 'tsup'; await build({ dts: false, clean: false, silent: true });";
  try {
    execFileSync(process.execPath, ['--input-type=module', '--eval', script], { cwd: root, stdio: 'pipe' });
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: Buffer; stderr?: Buffer };
    throw new Error(`tsup build failed before the tests:\n${String(stdout ?? '')}${String(stderr ?? '')}`);
  }
}
