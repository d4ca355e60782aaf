import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisTargets } from '../redis/targets.js';

/** The built `bin` (test/global-setup.ts builds `dist/` before the suite). */
const cli = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));

interface Running {
  child: ChildProcess;
  url: string;
  stderr: () => string;
}

const children = new Set<ChildProcess>();

async function startCli(configPath: string): Promise<Running> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of ['INFERGATE_API_KEY', 'INFERGATE_CONFIG', 'PORT']) delete env[name];
  const child = spawn(process.execPath, [cli, '--config', configPath, '--port', '0'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let stdout = '';
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the CLI did not start in 10 s:\n${stdout}${stderr}`)), 10_000);
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      const match = /^infergate listening on (\S+)$/m.exec(stdout);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    child.once('exit', (code) => reject(new Error(`the CLI exited (${code}):\n${stdout}${stderr}`)));
  });
  return { child, url, stderr: () => stderr };
}

async function stop(running: Running): Promise<void> {
  const exited = new Promise((resolve) => running.child.once('close', resolve));
  running.child.kill('SIGINT');
  await exited;
  children.delete(running.child);
}

/** The access log's `request` lines (JSON on stderr). */
function requestLines(stderr: string): Record<string, any>[] {
  return stderr
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, any>)
    .filter((line) => line.message === 'request');
}

const targets = await redisTargets();

describe.each(targets)('the standalone server: dollars in the access log, GET /v1/usage kept in Redis ($name) across restarts', (target) => {
  let dir: string;
  let configPath: string;
  const prefix = `infergate-cli-test:${randomUUID()}:`;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'infergate-usage-'));
    configPath = join(dir, 'config.json');
    await writeFile(
      configPath,
      JSON.stringify({
        keys: [
          { key: 'sk-alice', id: 'alice' },
          { key: 'sk-bob', id: 'bob' },
        ],
        providers: { local: { type: 'local', chunkDelayMs: 0 } },
        models: [{ id: 'local-chat', provider: 'local', price: { input: 3, output: 15 } }],
        usageStore: { type: 'redis', ...target.connection, keyPrefix: prefix },
      }),
    );
  });
  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await target.close(prefix);
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('prints costUsd on each request line and answers the same total after a restart', async () => {
    const first = await startCli(configPath);
    const alice = new OpenAI({ baseURL: `${first.url}/v1`, apiKey: 'sk-alice', maxRetries: 0 });
    await alice.chat.completions.create({ model: 'local-chat', messages: [{ role: 'user', content: 'hello there' }] });
    await expect.poll(() => requestLines(first.stderr()).length).toBe(1);
    const [line] = requestLines(first.stderr());
    expect(line).toMatchObject({ keyId: 'alice', model: 'local-chat', priceSource: 'config' });
    expect(line!.costUsd).toBeCloseTo((line!.usage.input * 3 + line!.usage.output * 15) / 1e6, 12);
    await expect.poll(async () => ((await alice.get('/usage')) as { data: unknown[] }).data.length).toBe(1);
    await stop(first);

    const second = await startCli(configPath);
    const page = (await new OpenAI({ baseURL: `${second.url}/v1`, apiKey: 'sk-alice', maxRetries: 0 }).get('/usage')) as { data: any[] };
    expect(page.data).toEqual([
      {
        date: new Date().toISOString().slice(0, 10),
        model: 'local-chat',
        requests: 1,
        input_tokens: line!.usage.input,
        output_tokens: line!.usage.output,
        cost_usd: line!.costUsd,
      },
    ]);
    const bob = (await new OpenAI({ baseURL: `${second.url}/v1`, apiKey: 'sk-bob', maxRetries: 0 }).get('/usage')) as { data: unknown[] };
    expect(bob.data).toEqual([]);
    await stop(second);
  });
});
