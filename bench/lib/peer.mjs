// The peer gateway arm: @portkey-ai/gateway, installed on demand into a temporary folder (never
// into this project), started as its own process on the gateway core.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
export const PEER_PACKAGE = '@portkey-ai/gateway';
export const PEER_VERSION = '1.15.2';

/**
 * Installs the peer (scripts off: its postinstall only applies its own dev patches) and returns the
 * path of its server entry, or the reason it cannot run here.
 * @param {string} [version]
 * @returns {Promise<{ entry: string, version: string, dir: string } | { error: string }>}
 */
export async function installPeer(version = PEER_VERSION) {
  const dir = join(tmpdir(), `infergate-bench-peer-${version}`);
  const pkgDir = join(dir, 'node_modules', ...PEER_PACKAGE.split('/'));
  const entry = join(pkgDir, 'build', 'start-server.js');
  if (!existsSync(entry)) {
    mkdirSync(dir, { recursive: true });
    try {
      await run('npm', ['install', '--prefix', dir, '--ignore-scripts', '--no-audit', '--no-fund', '--no-save', `${PEER_PACKAGE}@${version}`], {
        timeout: 300_000,
        maxBuffer: 16 * 1024 * 1024,
      });
    } catch (error) {
      return { error: `npm install ${PEER_PACKAGE}@${version} failed: ${String(/** @type {Error} */ (error).message).split('\n')[0]}` };
    }
  }
  if (!existsSync(entry)) return { error: `${PEER_PACKAGE}@${version} has no build/start-server.js` };
  const pkg = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'));
  const engines = pkg.engines?.node;
  if (engines && /^>=\s*(\d+)/.test(engines) && Number(/^>=\s*(\d+)/.exec(engines)?.[1]) > Number(process.versions.node.split('.')[0])) {
    return { error: `${PEER_PACKAGE}@${pkg.version} needs Node ${engines}` };
  }
  return { entry, version: pkg.version, dir };
}
