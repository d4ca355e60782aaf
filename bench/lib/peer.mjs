// The peer gateway arms, each installed on demand into a temporary folder (never into this
// project) at a pinned version and started as its own process on the gateway core:
// - `peer`: @portkey-ai/gateway on chat passthrough, told where the upstream is by request headers;
// - `ccr`: @musistudio/claude-code-router on the Anthropic client → chat upstream cell (what Claude
//   Code users route through), configured by a config.json under a temporary HOME.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { BENCH_KEY, MOCK_KEY } from './payloads.mjs';

const run = promisify(execFile);

/**
 * @typedef {object} PeerSpec
 * @property {string} package    npm name
 * @property {string} version    pinned version
 * @property {string} entry      the server script, inside the package
 * @property {string} cell       the one bench cell it runs
 * @property {string} title      how reports name it
 */

/** @type {Record<'peer' | 'ccr', PeerSpec>} */
export const peerSpecs = {
  peer: { package: '@portkey-ai/gateway', version: '1.15.2', entry: 'build/start-server.js', cell: 'chat-pass', title: 'portkey' },
  // 3.x needs Node ≥ 22 and is a different code base (@the-next-ai/ai-gateway); 2.0.0 is the last
  // release that runs on the Node 20 this bench targets. One bundled file, no dependencies.
  ccr: { package: '@musistudio/claude-code-router', version: '2.0.0', entry: 'dist/cli.js', cell: 'messages-to-chat', title: 'claude-code-router' },
};

/** @typedef {{ entry: string, version: string, dir: string }} InstalledPeer */

/**
 * Installs a peer (scripts off: neither needs its install scripts to serve) and returns the path of
 * its server entry, or the reason it cannot run here.
 * @param {PeerSpec} spec
 * @returns {Promise<InstalledPeer | { error: string }>}
 */
export async function installPeer(spec) {
  const dir = join(tmpdir(), `infergate-bench-peer-${spec.package.replace(/[@/]/g, '_')}-${spec.version}`);
  const pkgDir = join(dir, 'node_modules', ...spec.package.split('/'));
  const entry = join(pkgDir, spec.entry);
  if (!existsSync(entry)) {
    mkdirSync(dir, { recursive: true });
    try {
      await run('npm', ['install', '--prefix', dir, '--ignore-scripts', '--no-audit', '--no-fund', '--no-save', `${spec.package}@${spec.version}`], {
        timeout: 300_000,
        maxBuffer: 16 * 1024 * 1024,
      });
    } catch (error) {
      // npm's own words (the code and what it could not get) say more than "Command failed".
      const said = String(/** @type {{ stderr?: string }} */ (error).stderr ?? '')
        .split('\n')
        .filter((line) => /^npm (error|ERR!)/.test(line) && !/complete log/.test(line))
        .slice(0, 2)
        .map((line) => line.replace(/^npm (error|ERR!)\s*/, ''))
        .join('; ');
      return { error: `npm install ${spec.package}@${spec.version} failed: ${said || String(/** @type {Error} */ (error).message).split('\n')[0]}` };
    }
  }
  if (!existsSync(entry)) return { error: `${spec.package}@${spec.version} has no ${spec.entry}` };
  const pkg = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'));
  const needs = /^>=\s*(\d+)/.exec(pkg.engines?.node ?? '')?.[1];
  if (needs && Number(needs) > Number(process.versions.node.split('.')[0])) {
    return { error: `${spec.package}@${pkg.version} needs Node ${pkg.engines.node}` };
  }
  return { entry, version: pkg.version, dir };
}

/**
 * How to start an installed peer on a port, in front of the mock: its arguments and environment,
 * and what to remove once it has stopped.
 * @param {'peer' | 'ccr'} name @param {InstalledPeer} installed @param {{ port: number, mockOrigin: string }} where
 * @returns {{ args: string[], env: NodeJS.ProcessEnv, cwd: string, cleanup: () => void }}
 */
export function peerLaunch(name, installed, { port, mockOrigin }) {
  if (name === 'peer') {
    return { args: [`--port=${port}`, '--headless'], env: { ...process.env, NODE_ENV: 'production' }, cwd: installed.dir, cleanup: () => undefined };
  }
  // claude-code-router reads ~/.claude-code-router/config.json (os.homedir(), so $HOME) and writes
  // its pid file and ~/.claude.json there: a temporary HOME keeps the user's own untouched.
  const home = mkdtempSync(join(tmpdir(), 'infergate-bench-ccr-home-'));
  mkdirSync(join(home, '.claude-code-router'), { recursive: true });
  const config = {
    // Its default is debug logs to files; a gateway under load is measured without an access log.
    LOG: false,
    HOST: '127.0.0.1',
    PORT: port,
    APIKEY: BENCH_KEY,
    NON_INTERACTIVE_MODE: true,
    API_TIMEOUT_MS: 60_000,
    Providers: [{ name: 'mock', api_base_url: `${mockOrigin}/v1/chat/completions`, api_key: MOCK_KEY, models: ['mock-model'] }],
    Router: { default: 'mock,mock-model' },
  };
  writeFileSync(join(home, '.claude-code-router', 'config.json'), JSON.stringify(config, null, 2));
  return {
    args: ['start'],
    env: { ...process.env, HOME: home, USERPROFILE: home, NODE_ENV: 'production' },
    cwd: installed.dir,
    cleanup: () => rmSync(home, { recursive: true, force: true }),
  };
}
