import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const entry = fileURLToPath(new URL('./server.ts', import.meta.url));
const START_TIMEOUT_MS = 30_000;

/** A line the child's logger wrote: `warn`, `error`, or `crash` (from its process hooks). */
export interface LogLine {
  level: string;
  message: string;
  requestId?: string;
  [field: string]: unknown;
}

/**
 * The gateway under fuzz in a child process (see `server.ts`): a crash is the child exiting, which
 * is noticed here instead of killing the test runner; `restart` brings a fresh one up so that the
 * run goes on and the other routes are still fuzzed.
 */
export class GatewayProcess {
  private child!: ChildProcess;
  private logs: LogLine[] = [];
  private exited: string | undefined;
  url = '';
  /** How many times the child died during the run. */
  crashes = 0;

  static async start(): Promise<GatewayProcess> {
    const gateway = new GatewayProcess();
    await gateway.spawn();
    return gateway;
  }

  get alive(): boolean {
    return this.exited === undefined;
  }

  /** How the child ended, if it did. */
  get exitReason(): string | undefined {
    return this.exited;
  }

  /** Log lines since the last call. */
  takeLogs(): LogLine[] {
    const logs = this.logs;
    this.logs = [];
    return logs;
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.spawn();
  }

  async stop(): Promise<void> {
    if (!this.alive) return;
    const ended = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.kill('SIGTERM');
    await ended;
  }

  /** Resolves when the child has exited, or after `ms` if it has not. */
  async exitWithin(ms: number): Promise<boolean> {
    if (!this.alive) return true;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.child.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
    });
    return !this.alive;
  }

  private spawn(): Promise<void> {
    this.exited = undefined;
    this.url = '';
    const child = spawn(process.execPath, ['--import', 'tsx', entry], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    const stderrTail: string[] = [];
    createInterface({ input: child.stderr! }).on('line', (line) => {
      stderrTail.push(line);
      if (stderrTail.length > 20) stderrTail.shift();
      this.logs.push(parseLogLine(line));
    });
    child.on('exit', (code, signal) => {
      this.exited = `exited with ${signal ?? `code ${code}`}`;
      // A stop we asked for is not a crash.
      if (signal !== 'SIGTERM') this.crashes++;
    });
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`fuzz gateway did not start within ${START_TIMEOUT_MS} ms:\n${stderrTail.join('\n')}`)),
        START_TIMEOUT_MS,
      );
      createInterface({ input: child.stdout! }).once('line', (line) => {
        clearTimeout(timer);
        this.url = (JSON.parse(line) as { url: string }).url;
        resolve();
      });
      child.once('exit', () => {
        clearTimeout(timer);
        reject(new Error(`fuzz gateway exited at start (${this.exited}):\n${stderrTail.join('\n')}`));
      });
    });
  }
}

function parseLogLine(line: string): LogLine {
  try {
    const parsed = JSON.parse(line) as LogLine;
    if (parsed && typeof parsed === 'object' && typeof parsed.level === 'string') return parsed;
  } catch {
    // Not ours (a Node warning): kept as text.
  }
  return { level: 'stderr', message: line };
}
