import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * Gateway instances each in a process of its own (`fixtures/gateway-process.ts`), for the tests
 * that show several instances on one Redis acting as one gateway.
 */
const fixture = fileURLToPath(new URL('./fixtures/gateway-process.ts', import.meta.url));
const root = fileURLToPath(new URL('../..', import.meta.url));

export interface GatewayProcess {
  url: string;
  child: ChildProcess;
}

/** The built `bin` (test/global-setup.ts builds `dist/` before the suite). */
const cli = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));

/** Starts one instance with the fixture's config (upstreams, models, keys, redis, keyPrefix); resolves once it listens. */
export function startGatewayProcess(config: unknown): Promise<GatewayProcess> {
  return listening(
    spawn(process.execPath, ['--import', 'tsx', fixture, JSON.stringify(config)], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] }),
    /LISTENING (\S+)/,
  );
}

/** Starts the standalone server (`infergate --config <file>`) on a free port; resolves once it listens. */
export function startCliProcess(configPath: string): Promise<GatewayProcess> {
  const child = spawn(process.execPath, [cli, '--config', configPath, '--port', '0'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  return listening(child, /^infergate listening on (\S+)$/m);
}

async function listening(child: ChildProcess, announcement: RegExp): Promise<GatewayProcess> {
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`gateway process did not start:\n${output}`)), 20_000);
    const onData = (data: Buffer) => {
      output += data.toString();
      const match = announcement.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`gateway process exited (${code}):\n${output}`)));
  });
  return { url, child };
}

/** Stops the instances and waits until each has exited. */
export async function stopGatewayProcesses(instances: readonly GatewayProcess[]): Promise<void> {
  for (const instance of instances) instance.child.kill('SIGTERM');
  await Promise.all(
    instances.map((instance) => new Promise((resolve) => (instance.child.exitCode !== null ? resolve(null) : instance.child.once('exit', resolve)))),
  );
}

/** A Chat request for the model `gpt` with `key`, `extra` merged into the body. */
export function chat(instance: GatewayProcess, key: string, extra: Record<string, unknown> = {}): Promise<Response> {
  return fetch(instance.url + '/v1/chat/completions', {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt', messages: [{ role: 'user', content: 'Hi' }], ...extra }),
  });
}
