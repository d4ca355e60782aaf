import { type ChildProcess, spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config.js';
import { claudeCodeBinary, codexBinary, describeRun, geminiCliEntry, runCli } from './cli-harness.js';

/**
 * The README's "MCP gateway" section, run as written: the standalone server on the example config
 * (`npm start -- --config examples/mcp/config.json`, as `node dist/cli.js`, which `npm start`
 * builds and runs), then each sh block of the section in bash, with `claude`, `codex` and `gemini`
 * on PATH as the installed CLIs, in a fresh home holding what the section before says to set up
 * (its `export`s, Codex's `config.toml`, Gemini CLI's `settings.json`). Only the port differs.
 * Each block must exit 0 and print what its `#` comments say it prints.
 */

const root = fileURLToPath(new URL('../../', import.meta.url));
const README_PORT = '127.0.0.1:8787';
const RUN_TIMEOUT_MS = 90_000;
const TEST_TIMEOUT_MS = RUN_TIMEOUT_MS + 15_000;

/** The text of the README's `## <title>` section, up to the next `## ` heading. */
function section(readme: string, title: string): string {
  const start = readme.indexOf(`\n## ${title}\n`);
  expect(start, `README has no section "${title}"`).toBeGreaterThan(0);
  const end = readme.indexOf('\n## ', start + 1);
  return readme.slice(start, end < 0 ? undefined : end);
}

/** The fenced blocks of one language in a piece of Markdown, in order. */
function blocks(markdown: string, language: string): string[] {
  return [...markdown.matchAll(new RegExp('```' + language + '\\n([\\s\\S]*?)```', 'g'))].map((match) => match[1]!);
}

/** The block after the bold label (`**Claude Code**`) of a section. */
function blockAfter(markdown: string, label: string, language: string): string {
  const at = markdown.indexOf(`**${label}**`);
  expect(at, `no "${label}" in the section`).toBeGreaterThanOrEqual(0);
  return blocks(markdown.slice(at), language)[0]!;
}

const exportsOf = (block: string): string =>
  block
    .split('\n')
    .filter((line) => line.startsWith('export '))
    .join('\n');

/**
 * What a block's comments promise: the text of each command's trailing `# …` and each `# … a … b`
 * output line, split at the ellipses. JSON is compared without the space after `":` (Claude Code
 * prints it compact, Gemini CLI indented).
 */
function promisedOutput(block: string): string[] {
  const promised: string[] = [];
  for (const line of block.split('\n')) {
    const comment = line.startsWith('#') ? line.slice(1) : / {2,}# (.*)$/.exec(line)?.[1];
    if (comment) promised.push(...comment.split('…').map((part) => part.trim()));
  }
  return promised.filter((part) => part.length > 0).map(compactJson);
}
const compactJson = (text: string): string => text.replace(/":\s+/g, '":');

let readme: string;
let mcpSection: string;
let agentsSection: string;
let gateway: ChildProcess | undefined;
let gatewayHostPort: string;
let scratch: string;
/** A directory with `claude`, `codex` and `gemini` as the installed CLIs. */
let bin: string;

/** Starts `infergate --config examples/mcp/config.json` on a free port; resolves with its URL. */
async function startExampleGateway(): Promise<string> {
  const child = spawn(process.execPath, [join(root, 'dist/cli.js'), '--config', 'examples/mcp/config.json', '--port', '0'], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  gateway = child;
  let output = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the gateway did not start in 20 s:\n${output}`)), 20_000);
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
      const url = /^infergate listening on (\S+)$/m.exec(output)?.[1];
      if (url) {
        clearTimeout(timer);
        resolve(url);
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the gateway exited (${code}) before listening:\n${output}`));
    });
  });
}

beforeAll(async () => {
  readme = await readFile(join(root, 'README.md'), 'utf8');
  mcpSection = section(readme, 'MCP gateway');
  agentsSection = section(readme, 'Use with Claude Code / Codex / Gemini CLI');
  expect(blocks(mcpSection, 'sh')[0]).toContain('npm start -- --config examples/mcp/config.json');
  scratch = await mkdtemp(join(tmpdir(), 'infergate-readme-mcp-'));
  bin = join(scratch, 'bin');
  await mkdir(bin);
  await symlink(claudeCodeBinary(), join(bin, 'claude'));
  await symlink(codexBinary(), join(bin, 'codex'));
  await writeFile(join(bin, 'gemini'), `#!/bin/sh\nexec '${process.execPath}' '${geminiCliEntry()}' "$@"\n`);
  await chmod(join(bin, 'gemini'), 0o755);
  gatewayHostPort = new URL(await startExampleGateway()).host;
}, 60_000);

afterAll(async () => {
  if (gateway && gateway.exitCode === null) {
    const exited = new Promise((resolve) => gateway!.once('exit', resolve));
    gateway.kill('SIGINT');
    await exited;
  }
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

const onThisGateway = (text: string): string => text.replaceAll(README_PORT, gatewayHostPort);

/** Runs `script` in bash in a fresh home (prepared by `setUp`) and checks it printed what `block` promises. */
async function runAsWritten(name: string, block: string, script: string, setUp: (home: string) => Promise<void>): Promise<void> {
  const home = join(scratch, name);
  const work = join(home, 'work');
  await mkdir(work, { recursive: true });
  await setUp(home);
  const tmp = join(home, 'tmp');
  await mkdir(tmp);
  const run = await runCli('/bin/bash', {
    args: ['-euo', 'pipefail', '-c', onThisGateway(script)],
    cwd: work,
    env: {
      HOME: home,
      PATH: `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}`,
      TMPDIR: tmp,
      // Gemini CLI runs in place instead of relaunching itself with a larger heap.
      GEMINI_CLI_NO_RELAUNCH: 'true',
    },
    timeoutMs: RUN_TIMEOUT_MS,
  });
  const context = describeRun(run);
  expect(run.timedOut, context).toBe(false);
  expect(run.exitCode, context).toBe(0);
  const printed = compactJson(run.stdout);
  for (const promised of promisedOutput(onThisGateway(block))) expect(printed, context).toContain(promised);
}

describe('the README’s MCP gateway section, as written', () => {
  it('its config block is a valid config file (next to the example’s providers and models)', async () => {
    const example = JSON.parse(await readFile(join(root, 'examples/mcp/config.json'), 'utf8'));
    const block = JSON.parse(blocks(mcpSection, 'json')[0]!);
    expect(() => parseConfig({ ...example, ...block }, 'README.md')).not.toThrow();
    expect(() => parseConfig(example, 'examples/mcp/config.json')).not.toThrow();
  });

  it(
    'Claude Code: claude mcp add, claude mcp list (Connected), and a run that calls the vault’s tool',
    async () => {
      const block = blockAfter(mcpSection, 'Claude Code', 'sh');
      const script = `${exportsOf(blockAfter(agentsSection, 'Claude Code', 'sh'))}\n${block}`;
      await runAsWritten('claude', block, script, async () => {});
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'Codex: codex mcp add into the config.toml of the section before, and a run that calls the vault’s tool',
    async () => {
      const block = blockAfter(mcpSection, 'Codex', 'sh');
      await runAsWritten('codex', block, block, async (home) => {
        await mkdir(join(home, '.codex'));
        await writeFile(join(home, '.codex', 'config.toml'), onThisGateway(blockAfter(agentsSection, 'Codex', 'toml')));
      });
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'Gemini CLI: gemini mcp add into the settings.json of the section before, and a run that calls the vault’s tool',
    async () => {
      const block = blockAfter(mcpSection, 'Gemini CLI', 'sh');
      const script = `${exportsOf(blockAfter(agentsSection, 'Gemini CLI', 'sh'))}\n${block}`;
      await runAsWritten('gemini', block, script, async (home) => {
        await mkdir(join(home, '.gemini'));
        await writeFile(join(home, '.gemini', 'settings.json'), blockAfter(agentsSection, 'Gemini CLI', 'json'));
      });
    },
    TEST_TIMEOUT_MS,
  );
});
