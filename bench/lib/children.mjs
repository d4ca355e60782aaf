// The runner's child processes (mock upstream, gateway, floor proxy): started with an IPC channel,
// pinned to a core with `taskset` when there are two cores, and killed when the runner exits.
import { execFileSync, spawn } from 'node:child_process';
import os from 'node:os';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ipcClient } from './ipc.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** The core of the load generator and the mock; the process under test gets the other one. */
export const LOAD_CORE = 0;
export const GATEWAY_CORE = 1;

/** Whether processes can be pinned: `taskset` present and at least two cores. */
export const pinned = (() => {
  try {
    execFileSync('taskset', ['-V'], { stdio: 'ignore' });
    return os.cpus().length >= 2;
  } catch {
    return false;
  }
})();

/** Pins the calling process (the runner) to the load core. */
export function pinSelf() {
  if (pinned) execFileSync('taskset', ['-cp', String(LOAD_CORE), String(process.pid)], { stdio: 'ignore' });
}

/** @type {import('node:child_process').ChildProcess[]} */
export const children = [];

export function stopAll() {
  for (const child of children) if (child.exitCode === null && child.pid) child.kill('SIGKILL');
}
process.on('exit', stopAll);

/**
 * The command and arguments that run a node script, pinned to a core when possible (`core`
 * undefined: not pinned, the scheduler places it).
 * @param {string} script @param {string[]} args @param {number | undefined} core @param {string[]} [nodeArgs]
 */
export function nodeCommand(script, args, core, nodeArgs = []) {
  const pin = pinned && core !== undefined;
  return { command: pin ? 'taskset' : process.execPath, args: [...(pin ? ['-c', String(core), process.execPath] : []), ...nodeArgs, script, ...args] };
}

/**
 * Starts a node script with an IPC channel, pinned to a core (unless `core` is undefined), and
 * waits for it to announce its port. Its stderr is the runner's, or a pipe (`child.stderr`) for a
 * runner that reads it.
 * @param {string} name @param {string} script @param {string[]} args @param {number | undefined} core
 * @param {{ nodeArgs?: string[], env?: NodeJS.ProcessEnv, stderr?: 'inherit' | 'pipe' }} [options]
 */
export async function startChild(name, script, args, core, { nodeArgs = [], env, stderr = 'inherit' } = {}) {
  const { command, args: commandArgs } = nodeCommand(script, args, core, nodeArgs);
  const child = spawn(command, commandArgs, { stdio: ['ignore', 'inherit', stderr, 'ipc'], cwd: root, ...(env ? { env } : {}) });
  children.push(child);
  // A piped stderr is read by the runner once the child is up; what it says before is kept here,
  // so that a child that fails to start says why.
  let early = '';
  const keep = (/** @type {Buffer} */ chunk) => void (early = (early + chunk.toString()).slice(-4000));
  child.stderr?.on('data', keep);
  const port = await new Promise((resolvePort, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start in 20 s`)), 20_000);
    child.on('message', (/** @type {any} */ message) => {
      if (message?.ready) {
        clearTimeout(timer);
        child.stderr?.off('data', keep);
        resolvePort(message.port);
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited (${code}) before it was ready${early ? `:\n${early}` : ''}`));
    });
  });
  return { name, child, pid: /** @type {number} */ (child.pid), port: /** @type {number} */ (port), ipc: ipcClient(child) };
}

/** The commit under test, and whether src/ or package.json have uncommitted changes. */
export function gitInfo() {
  try {
    const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src', 'package.json'], { cwd: root, encoding: 'utf8' }).trim() !== '';
    return { commit, dirty };
  } catch {
    return { commit: 'unknown', dirty: false };
  }
}
