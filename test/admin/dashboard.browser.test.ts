import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import OpenAI from 'openai';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type TestDatabase, testDatabase } from '../helpers/postgres.js';

/**
 * The dashboard in Debian's Chromium against the real server: `dist/cli.js` (built by
 * test/global-setup.ts) with the admin key, the Postgres key store and request log, and the local
 * provider priced so requests cost something. The page is driven by role and label, as people
 * and screen readers find things; the gateway is called with the official `openai` SDK.
 */

const cli = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));
const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const vaultServer = fileURLToPath(new URL('../../examples/mcp/vault-server.mjs', import.meta.url));
const ADMIN_KEY = 'admin-key-for-the-browser-test-0123';
const MCP_KEY = 'sk-config-file-mcp-key-0002';
/** How long a check waits for the server's work to show (the log is written off the request's path); CI machines are slow. */
const SETTLE = { timeout: 10_000, interval: 100 };

let db: TestDatabase;
let dir: string;
let server: { child: ChildProcess; url: string; output: () => string };
let browser: Browser;
let page: Page;
/** Requests the page made anywhere but the gateway, and the browser's complaints (CSP, script errors). */
const elsewhere: string[] = [];
const complaints: string[] = [];

beforeAll(async () => {
  // No silent skip: a missing Chromium fails the suite (CI installs it, .ci/run; Debian: apt-get install chromium).
  if (!existsSync(chromiumPath)) throw new Error(`Chromium is not at ${chromiumPath}: install Debian's chromium or set CHROMIUM_PATH.`);
  db = await testDatabase();
  dir = await mkdtemp(join(tmpdir(), 'infergate-dashboard-'));
  const config = {
    // The models are called with the key made in the page; the config file's key calls tools.
    keys: [{ key: MCP_KEY, id: 'mcp-key', mcp: ['vault'] }],
    providers: { offline: { type: 'local', chunkDelayMs: 0 } },
    // Dollars per million tokens: the local provider is free otherwise, and the charts would show $0.
    models: [{ id: 'local-chat', provider: 'offline', price: { input: 1000, output: 2000 } }],
    keyStore: { type: 'postgres', url: db.url, schema: db.schema },
    requestLog: { type: 'postgres', url: db.url, schema: db.schema, flushMs: 20 },
    // The README's example MCP server, for the tool calls' section.
    mcp: { servers: { vault: { command: process.execPath, args: [vaultServer], env: { VAULT_TOKEN: 'tok_dashboard' } } } },
  };
  await writeFile(join(dir, 'infergate.json'), JSON.stringify(config));
  server = await startServer(['--config', join(dir, 'infergate.json'), '--port', '0'], { INFERGATE_ADMIN_KEY: ADMIN_KEY });
  browser = await chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    // CI runs some files under libfaketime: Chromium must not inherit it.
    env: withoutFakeTime(process.env),
  });
  page = await browser.newPage();
  const origin = new URL(server.url).origin;
  page.on('request', (request) => {
    if (!request.url().startsWith(origin + '/') && !request.url().startsWith('data:')) elsewhere.push(request.url());
  });
  page.on('pageerror', (error) => complaints.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    // The sign-in with a wrong key is a 401 the browser reports as a failed resource: expected.
    if (message.type() === 'error' && !message.text().includes('401 (Unauthorized)')) complaints.push(message.text());
  });
});

afterEach(async (context) => {
  if (context.task.result?.state !== 'fail' || !page) return;
  const shot = join(await mkdtemp(join(tmpdir(), 'infergate-dashboard-failure-')), 'page.png');
  await page.screenshot({ path: shot, fullPage: true }).catch(() => {});
  console.error(`The dashboard test failed: screenshot at ${shot}\nServer output:\n${server?.output()}`);
});

afterAll(async () => {
  await browser?.close();
  if (server && server.child.exitCode === null) {
    server.child.kill('SIGINT');
    await new Promise((resolve) => server.child.once('close', resolve));
  }
  await db?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('the admin dashboard in Chromium', () => {
  it('signs in, makes a key, sees its request and cost, rotates and revokes it', { timeout: 90_000 }, async () => {
    // This computer's clock a year behind the gateway's: the page's ranges follow the gateway's
    // clock (its answers' `date`), or the totals below would be $0.
    await page.clock.install({ time: Date.now() - 365 * 24 * 3_600_000 });
    // `/admin` sends the browser to `/admin/`, where the page's relative assets resolve.
    await page.goto(`${server.url}/admin`);
    expect(new URL(page.url()).pathname).toBe('/admin/');

    // A wrong admin key is refused with a message; the right one opens the overview.
    await page.getByLabel('Admin key').fill('not-the-admin-key-at-all');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent(), SETTLE).toContain('not accepted');
    await page.getByLabel('Admin key').fill(ADMIN_KEY);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await expect.poll(() => page.getByText(/Key store: postgres · Request log: postgres/).count(), SETTLE).toBe(1);

    // A key made in the page: its secret is shown once.
    await page.getByRole('link', { name: 'Keys' }).click();
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByLabel('Name').fill('browser-test');
    await page.getByLabel('Models').fill('local-chat');
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    const secret = await page.getByLabel('Secret').inputValue();
    expect(secret).toMatch(/^sk-ig-[A-Za-z0-9_-]{43}$/);
    await expect.poll(() => page.getByText(/shown only once/).count(), SETTLE).toBe(1);
    await page.getByRole('button', { name: 'I have copied it' }).click();
    expect(await page.getByLabel('Secret').count()).toBe(0);
    const keyRow = page.getByRole('row', { name: /browser-test/ });
    await keyRow.waitFor();
    const keyId = (await keyRow.getByRole('cell').first().textContent())!;
    expect(keyId).toMatch(/^key_[0-9a-f]{16}$/);

    // The key works with the official SDK.
    const { data: completion, response } = await chat(secret).withResponse();
    expect(completion.choices[0]!.message.content).toBeTruthy();
    const requestId = response.headers.get('x-request-id')!;
    expect(requestId).toMatch(/^req_/);

    // The request in the log (written off the request's path: refresh until it is there), then its detail.
    await page.getByRole('link', { name: 'Request log' }).click();
    const logRow = page.getByRole('row', { name: new RegExp(requestId) });
    await expect
      .poll(async () => {
        await page.getByRole('button', { name: 'Refresh' }).click();
        return logRow.count();
      }, SETTLE)
      .toBe(1);
    const cells = await logRow.getByRole('cell').allTextContents();
    expect(cells).toContain(keyId);
    expect(cells).toContain('local-chat');
    expect(cells).toContain('200 ok');
    const cost = cells.find((cell) => cell.startsWith('$'))!;
    expect(cost).not.toBe('$0');
    // The filters go to the API: errors only hides it, this key's requests show it.
    await page.getByLabel('Status').selectOption('error');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await expect.poll(() => page.getByRole('cell', { name: 'No requests match.' }).count(), SETTLE).toBe(1);
    await page.getByLabel('Status').selectOption('');
    await page.getByLabel('Key id').fill(keyId);
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await expect.poll(() => logRow.count(), SETTLE).toBe(1);
    await logRow.getByRole('link', { name: requestId }).click();
    await page.getByRole('heading', { name: `Request ${requestId}` }).waitFor();
    expect(await detail('Model')).toBe('local-chat');
    expect(await detail('Endpoint')).toBe('/v1/chat/completions');
    expect(await detail('Cost')).toBe(cost);

    // The cost in the overview's totals and in the by-model table under the charts.
    await page.getByRole('link', { name: 'Overview' }).click();
    const totals = page.getByRole('table', { name: 'Totals' });
    await totals.waitFor();
    expect(await totals.getByRole('cell').first().textContent()).toBe(cost);
    expect(
      await page
        .getByRole('table', { name: 'By model' })
        .getByRole('row', { name: /local-chat/ })
        .getByRole('cell')
        .first()
        .textContent(),
    ).toBe(cost);
    expect(await page.getByRole('img', { name: 'Spend by model (USD) chart' }).locator('canvas').count()).toBeGreaterThan(0);

    // An edit: a limit of its own, shown in the list.
    await page.getByRole('link', { name: 'Keys' }).click();
    await keyRow.getByRole('button', { name: 'Edit' }).click();
    expect(await page.getByLabel('Models').inputValue()).toBe('local-chat');
    await page.getByLabel('Requests per minute').fill('100');
    await page.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => keyRow.getByRole('cell').allTextContents(), SETTLE).toContain('100 req/min');

    // Rotation: a new secret shown once; the old one keeps working during the grace period.
    await keyRow.getByRole('button', { name: 'Rotate' }).click();
    const rotate = page.getByRole('dialog', { name: /Rotate/ });
    // The dialog takes the focus: typed from the keyboard.
    const grace = rotate.getByLabel('Grace period (seconds)');
    await expect.poll(() => grace.evaluate((input) => input === document.activeElement), SETTLE).toBe(true);
    await page.keyboard.press('ControlOrMeta+A');
    await page.keyboard.type('3600');
    await page.keyboard.press('Enter');
    const rotated = await page.getByLabel('Secret').inputValue();
    expect(rotated).toMatch(/^sk-ig-/);
    expect(rotated).not.toBe(secret);
    await expect.poll(() => page.getByText(/previous key keeps working until/).count(), SETTLE).toBe(1);
    await page.getByRole('button', { name: 'I have copied it' }).click();
    await chat(secret);
    await chat(rotated);

    // Revocation asks first (Escape backs out, the key still works), then both secrets are refused.
    await keyRow.getByRole('button', { name: 'Revoke' }).click();
    const revoke = page.getByRole('dialog', { name: /Revoke/ });
    await revoke.waitFor();
    await page.keyboard.press('Escape');
    await expect.poll(() => revoke.count(), SETTLE).toBe(0);
    await chat(rotated);
    await keyRow.getByRole('button', { name: 'Revoke' }).click();
    await revoke.getByRole('button', { name: 'Revoke key' }).click();
    await expect.poll(() => keyRow.count(), SETTLE).toBe(0);
    for (const refused of [rotated, secret]) {
      const error = await chat(refused).then(
        () => undefined,
        (failure: unknown) => failure,
      );
      expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
    }
    // Revoked keys are listed when asked.
    await page.getByLabel('Show revoked keys').check();
    await expect.poll(() => keyRow.getByRole('cell').allTextContents(), SETTLE).toContainEqual(expect.stringMatching(/^revoked /));

    // The deployment that served the requests is in the health view.
    await page.getByRole('link', { name: 'Health' }).click();
    await page.getByRole('row', { name: /local-chat/ }).waitFor();

    // Offline and within its policy: nothing fetched elsewhere, nothing blocked, no script error.
    expect(elsewhere).toEqual([]);
    expect(complaints).toEqual([]);
  });

  it('lists the MCP tool calls, filtered by outcome, tool and key', { timeout: 60_000 }, async () => {
    // Two calls with the MCP SDK's client through /mcp: one answered, one the vault does not know.
    const client = new Client({ name: 'dashboard-test', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${MCP_KEY}` } } }));
    try {
      const answer = await client.callTool({ name: 'vault__reveal', arguments: { purpose: 'the dashboard test' } });
      expect(answer.content).toEqual([{ type: 'text', text: 'The vault token is tok_dashboard' }]);
      expect(await client.callTool({ name: 'vault__shred', arguments: {} })).toMatchObject({ isError: true });
    } finally {
      await client.close();
    }

    await signIn();
    await page.getByRole('link', { name: 'Tool calls' }).click();
    await page.getByRole('heading', { name: 'Tool calls' }).waitFor();
    const table = page.getByRole('table', { name: 'Tool calls, newest first' });
    // Written off the call's path: refresh until both are there, newest first.
    await expect
      .poll(async () => {
        await page.getByRole('button', { name: 'Refresh' }).click();
        return table.getByRole('row').count();
      }, SETTLE)
      .toBe(3);
    const [failed, answered] = await Promise.all([1, 2].map((n) => table.getByRole('row').nth(n).getByRole('cell').allTextContents()));
    expect(answered!.slice(1, 5)).toEqual(['mcp-key', 'vault', 'reveal', 'ok']);
    expect(failed!.slice(1, 5)).toEqual(['mcp-key', 'vault', 'shred', 'tool_error']);
    // Neither the key, the upstream's token nor the arguments are on the page.
    const text = (await page.locator('main').textContent()) ?? '';
    for (const secret of [MCP_KEY, 'tok_dashboard', 'the dashboard test']) expect(text).not.toContain(secret);

    // The filters go to the API.
    await page.getByLabel('Outcome').selectOption('tool_error');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await expect.poll(() => table.getByRole('row').count(), SETTLE).toBe(2);
    expect(await table.getByRole('row').nth(1).getByRole('cell').nth(3).textContent()).toBe('shred');
    await page.getByLabel('Outcome').selectOption('');
    await page.getByLabel('Tool', { exact: true }).fill('reveal');
    await page.getByLabel('Key id').fill('another-key');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await expect.poll(() => page.getByRole('cell', { name: 'No tool calls match.' }).count(), SETTLE).toBe(1);
    await page.getByRole('button', { name: 'Clear' }).click();
    await expect.poll(() => table.getByRole('row').count(), SETTLE).toBe(3);

    expect(elsewhere).toEqual([]);
    expect(complaints).toEqual([]);
  });
});

/** The dashboard, signed in with the admin key (kept for the session once given). */
async function signIn(): Promise<void> {
  await page.goto(`${server.url}/admin/`);
  const keyField = page.getByLabel('Admin key');
  const overview = page.getByRole('heading', { name: 'Overview' });
  await expect.poll(async () => (await keyField.count()) + (await overview.count()), SETTLE).toBeGreaterThan(0);
  if ((await keyField.count()) > 0) {
    await keyField.fill(ADMIN_KEY);
    await page.getByRole('button', { name: 'Sign in' }).click();
  }
  await overview.waitFor();
}

function chat(apiKey: string) {
  const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey, maxRetries: 0 });
  return client.chat.completions.create({ model: 'local-chat', messages: [{ role: 'user', content: 'Hello from the dashboard test' }] });
}

/** A value of the request detail's list, by its term. */
async function detail(term: string): Promise<string | null> {
  return page
    .getByRole('term')
    .filter({ hasText: new RegExp(`^${term}$`) })
    .locator('xpath=following-sibling::dd[1]')
    .textContent();
}

function withoutFakeTime(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined && entry[0] !== 'LD_PRELOAD' && !entry[0].startsWith('FAKETIME')),
  );
}

/** `dist/cli.js` with the given arguments, once it prints where it listens. */
async function startServer(args: string[], env: Record<string, string>): Promise<typeof server> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env };
  for (const name of ['INFERGATE_API_KEY', 'INFERGATE_CONFIG', 'PORT']) delete childEnv[name];
  const child = spawn(process.execPath, [cli, ...args], { env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the server printed no address in 20 s:\n${output}`)), 20_000);
    child.stdout!.on('data', () => {
      const found = /^infergate listening on (\S+)$/m.exec(output)?.[1];
      if (found) {
        clearTimeout(timer);
        resolve(found);
      }
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      reject(new Error(`the server exited (${code}) before listening:\n${output}`));
    });
  });
  return { child, url, output: () => output };
}
