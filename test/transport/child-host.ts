import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { freePort } from '../helpers/serve.js';
import type { ExampleOptions } from '../../examples/shared/catalog.ts';
import type { RunningHost } from './suite.js';

export { freePort };

export const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

export interface ChildHostOptions {
  command: string;
  args: string[];
  env: Record<string, string>;
  mount: string;
  /** Finds the origin in the child's output once it accepts requests. */
  ready: (output: string) => string | undefined;
  timeoutMs: number;
}

/**
 * Runs a host in its own runtime (the real `bun`, `deno` or `next dev`) as a child process in its
 * own process group, and stops the whole group on `close`: `next dev` starts a server process of
 * its own.
 */
export async function spawnHost(options: ChildHostOptions): Promise<RunningHost> {
  const child = spawn(options.command, options.args, {
    cwd: repoRoot,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const signalGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, signal);
    } catch {
      // The group is gone already.
    }
  };
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    signalGroup('SIGTERM');
    const killer = setTimeout(() => signalGroup('SIGKILL'), 5_000);
    await exited;
    clearTimeout(killer);
  };
  let origin: string;
  try {
    origin = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${options.command} did not start in ${options.timeoutMs} ms:\n${output}`)), options.timeoutMs);
      const onData = (data: Buffer) => {
        output += data.toString('utf8');
        const found = options.ready(output);
        if (found) {
          clearTimeout(timer);
          resolve(found);
        }
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);
      void exited.then((code) => {
        clearTimeout(timer);
        reject(new Error(`${options.command} exited with ${code} before it was ready:\n${output}`));
      });
    });
  } catch (error) {
    await stop();
    throw error;
  }
  // From now on only drain the pipes, so that a chatty child never blocks on a full one.
  for (const stream of [child.stdout, child.stderr]) stream.removeAllListeners('data').resume();
  return { origin, mount: options.mount, close: stop };
}

/** The example servers print "… listening on http://127.0.0.1:PORT …". */
export function listeningLine(output: string): string | undefined {
  return /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1];
}

/** The environment by which an example's server entry offers the test upstream (`optionsFromEnv`). */
export function upstreamEnv({ upstream, mcpServerUrl }: ExampleOptions): Record<string, string> {
  return {
    ...(upstream ? { OPENAI_BASE_URL: upstream.baseURL, OPENAI_MODELS: upstream.models.join(',') } : {}),
    ...(mcpServerUrl ? { MCP_SERVER_URL: mcpServerUrl } : {}),
  };
}
