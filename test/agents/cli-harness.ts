import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/**
 * Where the CLIs are installed: the project's own node_modules, or the directory named by
 * INFERGATE_AGENT_CLIS (holding a node_modules), where `.ci/bump-agents` installs their latest
 * releases without touching the project's install.
 */
const require = createRequire(process.env.INFERGATE_AGENT_CLIS ? join(process.env.INFERGATE_AGENT_CLIS, 'package.json') : import.meta.url);

/**
 * A file of an installed CLI package. Throws (never skips) when it is missing: the agent cells
 * are the proof that the gateway serves these clients.
 */
function packageFile(packageName: string, relativePath: string): string {
  let root: string;
  try {
    root = dirname(require.resolve(`${packageName}/package.json`));
  } catch {
    const fix = process.env.INFERGATE_AGENT_CLIS ? `install it in ${process.env.INFERGATE_AGENT_CLIS}` : 'run npm ci on linux-x64';
    throw new Error(`${packageName} is not installed (${process.platform}-${process.arch}); the agent tests need it: ${fix}`);
  }
  const file = join(root, relativePath);
  if (!existsSync(file)) throw new Error(`${file} is missing; reinstall ${packageName}`);
  return file;
}

/**
 * The native binaries come from the platform packages: npm does not run the wrapper packages'
 * install scripts here, so the wrappers' own `bin` shims are not usable.
 */
export const claudeCodeBinary = (): string => packageFile('@anthropic-ai/claude-code-linux-x64', 'claude');
export const codexBinary = (): string => packageFile('@openai/codex-linux-x64', 'vendor/x86_64-unknown-linux-musl/bin/codex');
/** Gemini CLI is one JavaScript bundle, run with this Node. */
export const geminiCliEntry = (): string => packageFile('@google/gemini-cli', 'bundle/gemini.js');

export interface CliRun {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  /** Wall time of the run, for the report of how long a cell takes (never asserted). */
  ms: number;
}

export interface CliOptions {
  args: readonly string[];
  cwd: string;
  /** The whole environment of the child: nothing of the developer's own is inherited but PATH. */
  env: Record<string, string>;
  timeoutMs: number;
}

/** Process groups of the CLIs still running, killed if the test process ends first (a test timeout, a crash). */
const running = new Set<number>();
process.once('exit', () => {
  for (const group of running) killGroup(group);
});

function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/**
 * Runs a CLI to completion with stdin closed (Codex reads more input from an open stdin). The
 * child leads its own process group, so a timeout kills it with every command it started.
 */
export function runCli(binary: string, options: CliOptions): Promise<CliRun> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(binary, options.args, {
      cwd: options.cwd,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8', ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const pid = child.pid;
    if (pid !== undefined) running.add(pid);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      if (pid !== undefined) killGroup(pid);
    }, options.timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      if (pid !== undefined) running.delete(pid);
      reject(error);
    });
    child.on('close', (exitCode, signal) => {
      clearTimeout(timer);
      if (pid !== undefined) {
        killGroup(pid); // anything the CLI left running in its group
        running.delete(pid);
      }
      resolve({ exitCode, signal, stdout, stderr, timedOut, ms: Date.now() - started });
    });
  });
}

/** A cell's scratch space: the CLI's home, its working directory and the file the agent must read. */
export interface Workspace {
  home: string;
  work: string;
  /** Absolute path of the file holding the token. */
  secretPath: string;
  token: string;
  remove(): Promise<void>;
}

/** A value only the file knows: the model can repeat it only after the client's tool read it. */
export function secretToken(): string {
  return `tok_${randomBytes(8).toString('hex')}`;
}

export async function makeWorkspace(): Promise<Workspace> {
  const root = await mkdtemp(join(tmpdir(), 'infergate-agent-'));
  const home = join(root, 'home');
  const work = join(root, 'work');
  await mkdir(home);
  await mkdir(work);
  const token = secretToken();
  const secretPath = join(work, 'secret.txt');
  await writeFile(secretPath, `${token}\n`);
  return { home, work, secretPath, token, remove: () => rm(root, { recursive: true, force: true }) };
}

/** The run as text for a failed assertion: what the CLI printed and why it stopped. */
export function describeRun(run: CliRun): string {
  const tail = (text: string) => (text.length > 4000 ? `…${text.slice(-4000)}` : text);
  return [
    `exit ${run.exitCode}${run.signal ? ` (${run.signal})` : ''}${run.timedOut ? ', timed out' : ''} after ${run.ms} ms`,
    `--- stdout\n${tail(run.stdout)}`,
    `--- stderr\n${tail(run.stderr)}`,
  ].join('\n');
}
