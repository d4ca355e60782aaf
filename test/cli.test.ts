import Anthropic from '@anthropic-ai/sdk';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { withinOneMinute } from './helpers/rate-window.js';
import { parsePrometheus, sample } from './helpers/prometheus.js';

/** The built `bin` (test/global-setup.ts builds `dist/` before the suite). */
const cli = fileURLToPath(new URL('../dist/cli.js', import.meta.url));

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

interface Running {
  child: ChildProcess;
  stdout: string;
  url: string;
  /** The key the CLI printed, if it printed one. */
  key: string | undefined;
  exit: Promise<Exit>;
}

/** Every CLI a test started; a failed assertion must not leave a server running. */
const children = new Set<ChildProcess>();

function killChildren(): void {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  children.clear();
}

/** Runs the CLI with a clean environment (none of the variables it reads, except those given). */
function runCli(args: string[], env: Record<string, string> = {}): { child: ChildProcess; exit: Promise<Exit>; output: () => Exit } {
  const childEnv: NodeJS.ProcessEnv = { ...process.env };
  for (const name of ['INFERGATE_API_KEY', 'INFERGATE_ADMIN_KEY', 'INFERGATE_CONFIG', 'PORT']) delete childEnv[name];
  const child = spawn(process.execPath, [cli, ...args], { env: { ...childEnv, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  const result: Exit = { code: null, signal: null, stdout: '', stderr: '' };
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (result.stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (result.stderr += chunk));
  const exit = new Promise<Exit>((resolve) => {
    child.on('close', (code, signal) => resolve({ ...result, code, signal }));
  });
  return { child, exit, output: () => result };
}

/** Starts the server and waits for its start-up lines. */
async function startCli(args: string[], env: Record<string, string> = {}): Promise<Running> {
  const { child, exit, output } = runCli(args, env);
  const stdout = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the CLI printed no start-up lines in 10 s:\n${output().stdout}${output().stderr}`)), 10_000);
    const check = () => {
      if (/^Models: .*\n/m.test(output().stdout)) {
        clearTimeout(timer);
        // Give the rest of the same write (the Try line) a moment to arrive.
        setImmediate(() => resolve(output().stdout));
      }
    };
    child.stdout!.on('data', check);
    void exit.then((result) => {
      clearTimeout(timer);
      reject(new Error(`the CLI exited (${result.code}) before listening:\n${result.stdout}${result.stderr}`));
    });
  });
  const url = /^infergate listening on (\S+)$/m.exec(stdout)?.[1];
  expect(url).toBeDefined();
  return { child, stdout, url: url!, key: /^API key: (\S+)$/m.exec(stdout)?.[1], exit };
}

async function stop(running: Running, signal: NodeJS.Signals = 'SIGINT'): Promise<Exit> {
  running.child.kill(signal);
  return running.exit;
}

async function modelIds(baseURL: string, apiKey: string): Promise<string[]> {
  const client = new OpenAI({ baseURL, apiKey, maxRetries: 0 });
  const ids: string[] = [];
  for await (const model of client.models.list()) ids.push(model.id);
  return ids;
}

describe('infergate CLI', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'infergate-cli-'));
  });
  afterEach(killChildren);
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('serves the local provider with a generated key, prints how to call it, and stops on SIGINT', async () => {
    const running = await startCli(['--port', '0']);
    expect(running.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(running.key).toMatch(/^sk-local-[0-9a-f]{32}$/);
    expect(running.stdout).toContain('Models: local-chat, local-reasoner, local-image, local-video, local-speech, local-embedding, local-transcription\n');
    expect(running.stdout).toContain(
      `Try: curl ${running.url}/v1/chat/completions -H "Authorization: Bearer ${running.key}" -H "Content-Type: application/json" -d '{"model":"local-chat","messages":[{"role":"user","content":"Hello"}]}'`,
    );

    expect(await modelIds(running.url + '/v1', running.key!)).toEqual([
      'local-chat',
      'local-reasoner',
      'local-image',
      'local-video',
      'local-speech',
      'local-embedding',
      'local-transcription',
    ]);

    const exit = await stop(running);
    expect(exit).toMatchObject({ code: 0, signal: null });
  });

  it('takes the key from INFERGATE_API_KEY and the port from PORT, and stops on SIGTERM', async () => {
    const running = await startCli([], { INFERGATE_API_KEY: 'sk-test-env-key-9f8e7d', PORT: '0' });
    // The operator's own key is never printed whole: masked, and the curl line names the variable.
    expect(running.stdout).not.toContain('sk-test-env-key-9f8e7d');
    expect(running.stdout).toContain('API key: sk-…8e7d (from INFERGATE_API_KEY)\n');
    expect(running.stdout).toContain('-H "Authorization: Bearer $INFERGATE_API_KEY"');
    expect(await modelIds(running.url + '/v1', 'sk-test-env-key-9f8e7d')).toContain('local-chat');
    await expect(modelIds(running.url + '/v1', 'sk-wrong')).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
    expect(await stop(running, 'SIGTERM')).toMatchObject({ code: 0, signal: null });
  });

  it('serves a config file without printing its keys', async () => {
    const path = join(dir, 'infergate.json');
    const config = {
      keys: [{ key: 'sk-configured-secret', models: ['local-chat'] }],
      providers: { offline: { type: 'local', chunkDelayMs: 0 } },
      models: [
        { id: 'local-chat', provider: 'offline' },
        { id: 'local-reasoner', provider: 'offline' },
      ],
      basePath: '/ai',
      port: 1,
    };
    await writeFile(path, JSON.stringify(config));
    // --port wins over the config's port (1 would need privileges); INFERGATE_CONFIG names the file.
    const running = await startCli(['--port', '0'], { INFERGATE_CONFIG: path, INFERGATE_API_KEY: 'sk-ignored' });
    expect(running.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/ai$/);
    expect(running.key).toBeUndefined();
    expect(running.stdout).toContain('API keys: from the config file (1)');
    expect(running.stdout).not.toContain('sk-configured-secret');
    expect(running.stdout).not.toContain('sk-ignored');
    // The key's scope applies: only local-chat is listed.
    expect(await modelIds(running.url + '/v1', 'sk-configured-secret')).toEqual(['local-chat']);
    expect(await stop(running)).toMatchObject({ code: 0 });
  });

  it('exits with 1 and names the bad field when the config file is invalid', async () => {
    const path = join(dir, 'bad.json');
    await writeFile(path, JSON.stringify({ keys: [{ key: 'sk-a' }], providers: { oai: { type: 'openai', baseURL: 'not a url' } } }));
    const [exit, missing] = await Promise.all([runCli(['--config', path, '--port', '0']).exit, runCli(['--config', join(dir, 'missing.json')]).exit]);
    expect(exit.code).toBe(1);
    expect(exit.stderr).toContain('providers.oai.baseURL: expected a URL string');
    expect(exit.stdout).toBe('');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('no such file');
  });

  it('prints neither the password of a URL nor the text around a JSON syntax error', async () => {
    const badUrl = join(dir, 'userinfo.json');
    const providers = { oai: { type: 'openai', baseURL: 'https://admin:hunter2@llm internal/v1' } };
    await writeFile(badUrl, JSON.stringify({ keys: [{ key: 'sk-a' }], providers }));
    const unquoted = join(dir, 'unquoted.json');
    await writeFile(unquoted, '{\n  "keys": [{ "key": "sk-a" }],\n  "providers": { "oai": { "type": "openai", "apiKey": sk-proj-UPSTREAM-SECRET } }\n}\n');
    const [url, json] = await Promise.all([runCli(['--config', badUrl]).exit, runCli(['--config', unquoted]).exit]);
    expect(url.code).toBe(1);
    expect(url.stderr).toContain('providers.oai.baseURL: expected a URL string, got "https://***@llm internal/v1"');
    expect(url.stderr).not.toMatch(/admin|hunter2/);
    expect(json.code).toBe(1);
    expect(json.stderr).toBe(`infergate: Config file ${unquoted} is not valid JSON: syntax error at line 3, column 55.\n`);
  });

  it('exits with 1 on a bad flag or port, and prints help with --help', async () => {
    const [badPort, unknown, help] = await Promise.all([runCli(['--port', 'eighty']).exit, runCli(['--prot', '1']).exit, runCli(['--help']).exit]);
    expect(badPort.code).toBe(1);
    expect(badPort.stderr).toContain('--port must be a port number 0-65535, got "eighty"');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("Unknown option '--prot'");
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: infergate \[--config FILE\] \[--port N\] \[--host H\]/);
  });
});

describe('GET /metrics on the standalone server', () => {
  const ADMIN_KEY = 'admin-key-0123456789abcdef';
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'infergate-metrics-'));
  });
  afterEach(killChildren);
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const scrape = (running: Running, authorization?: string) =>
    fetch(new URL(running.url).origin + '/metrics', authorization ? { headers: { authorization } } : {});

  it('serves Prometheus text to the admin key only, with the requests, the refusal and the cache hit counted', async () => {
    const path = join(dir, 'admin.json');
    const config = {
      keys: [
        { key: 'sk-gateway-key', id: 'team-a' },
        { key: 'sk-limited-key', id: 'team-b', limits: { requestsPerMinute: 1 } },
      ],
      providers: { offline: { type: 'local', chunkDelayMs: 0 } },
      models: [{ id: 'local-chat', provider: 'offline' }],
      responseCache: {},
      admin: { key: ADMIN_KEY },
    };
    await writeFile(path, JSON.stringify(config));
    const running = await startCli(['--config', path, '--port', '0']);
    expect(running.stdout).toContain(`Metrics: ${running.url}/metrics (Authorization: Bearer <admin key>)\n`);
    expect(running.stdout).not.toContain(ADMIN_KEY);

    const openai = new OpenAI({ baseURL: running.url + '/v1', apiKey: 'sk-gateway-key', maxRetries: 0 });
    const cached = { model: 'local-chat', temperature: 0, messages: [{ role: 'user' as const, content: 'Hello' }] };
    await openai.chat.completions.create(cached, { headers: { 'x-infergate-cache': 'on' } });
    const hit = await openai.chat.completions.create(cached, { headers: { 'x-infergate-cache': 'on' } }).withResponse();
    expect(hit.response.headers.get('x-infergate-cache')).toBe('hit');
    expect(hit.response.headers.get('x-infergate-overhead-ms')).toMatch(/^\d+\.\d\d$/);
    for await (const _ of await openai.chat.completions.create({ model: 'local-chat', stream: true, messages: [{ role: 'user', content: 'Hi' }] }));
    await withinOneMinute();
    const limited = new OpenAI({ baseURL: running.url + '/v1', apiKey: 'sk-limited-key', maxRetries: 0 });
    await limited.chat.completions.create({ model: 'local-chat', messages: [{ role: 'user', content: 'Hi' }] });
    await expect(limited.chat.completions.create({ model: 'local-chat', messages: [{ role: 'user', content: 'Hi' }] })).rejects.toMatchObject({ status: 429 });

    // Recorded after each answer: scrape until the last request shows.
    let text = '';
    await expect
      .poll(async () => {
        const response = await scrape(running, `Bearer ${ADMIN_KEY}`);
        expect(response.status).toBe(200);
        expect(response.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
        text = await response.text();
        return sample(text, 'gen_ai_server_request_duration_count', { gen_ai_request_model: 'local-chat' });
      })
      .toBe(4);
    const samples = parsePrometheus(text);
    const names = new Set(samples.map((line) => line.name));
    for (const name of [
      'gen_ai_server_request_duration_bucket',
      'gen_ai_client_token_usage_sum',
      'gen_ai_server_time_to_first_token_count',
      'infergate_overhead_bucket',
      'infergate_upstream_attempts_total',
      'infergate_admission_refusals_total',
      'infergate_cache_lookups_total',
    ]) {
      expect(names).toContain(name);
    }
    expect(sample(text, 'infergate_admission_refusals_total', { infergate_refusal_reason: 'requests', error_type: 'rate_limit_exceeded' })).toBe(1);
    expect(sample(text, 'infergate_cache_lookups_total', { infergate_cache_result: 'hit' })).toBe(1);
    expect(sample(text, 'gen_ai_client_token_usage_count', { gen_ai_token_type: 'input', gen_ai_provider_name: 'local' })).toBe(3);
    expect(text).not.toMatch(/sk-gateway-key|sk-limited-key|team-a|team-b/);

    // Nobody else: no credential, a gateway key, a wrong admin key.
    for (const authorization of [undefined, 'Bearer sk-gateway-key', `Bearer ${ADMIN_KEY}x`]) {
      const refused = await scrape(running, authorization);
      expect(refused.status).toBe(401);
      expect(refused.headers.get('www-authenticate')).toBe('Bearer');
    }
    expect(await stop(running)).toMatchObject({ code: 0 });
  });

  it('is not served without an admin key (404, and the start-up says so); INFERGATE_ADMIN_KEY serves it', async () => {
    const without = await startCli(['--port', '0'], { INFERGATE_API_KEY: 'sk-test-env-key-9f8e7d' });
    expect(without.stdout).toContain('Metrics: not served (no admin key');
    expect((await scrape(without, 'Bearer sk-test-env-key-9f8e7d')).status).toBe(404);
    const withKey = await startCli(['--port', '0'], { INFERGATE_ADMIN_KEY: ADMIN_KEY });
    expect((await scrape(withKey, `Bearer ${ADMIN_KEY}`)).status).toBe(200);
    await Promise.all([stop(without), stop(withKey)]);
  });
});

describe('the admin API and dashboard on the standalone server', () => {
  const ADMIN_KEY = 'admin-key-0123456789abcdef';
  afterEach(killChildren);

  it('is served at /admin with INFERGATE_ADMIN_KEY: a key made there works with the openai SDK, is logged, and is refused once revoked', async () => {
    const running = await startCli(['--port', '0'], { INFERGATE_ADMIN_KEY: ADMIN_KEY, INFERGATE_API_KEY: 'sk-test-env-key-9f8e7d' });
    const origin = new URL(running.url).origin;
    expect(running.stdout).toContain(`Dashboard: ${origin}/admin/ (sign in with the admin key`);
    expect(running.stdout).toContain('Keys made at run time: in memory (lost on restart');
    expect(running.stdout).toContain('Request log: in memory (the last 10000 requests');
    const admin = (path: string, init: RequestInit = {}, key = ADMIN_KEY) =>
      fetch(`${origin}/admin${path}`, { ...init, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' } });

    expect((await fetch(`${origin}/admin/`)).status).toBe(200);
    // The gateway's own key opens the gateway, not the admin API.
    expect((await admin('/keys', {}, 'sk-test-env-key-9f8e7d')).status).toBe(401);
    expect(await (await admin('/status')).json()).toMatchObject({ keyStore: 'memory', requestLog: 'memory' });

    const created = (await (await admin('/keys', { method: 'POST', body: '{"name":"cli"}' })).json()) as { id: string; key: string };
    const client = new OpenAI({ baseURL: running.url + '/v1', apiKey: created.key, maxRetries: 0 });
    const completion = await client.chat.completions.create({ model: 'local-chat', messages: [{ role: 'user', content: 'Hi' }] });
    expect(completion.choices[0]!.message.content).toBeTruthy();
    const logs = (await (await admin(`/logs?keyId=${created.id}`)).json()) as { data: { model: string }[] };
    expect(logs.data).toEqual([expect.objectContaining({ model: 'local-chat' })]);
    // The configured (here: environment) key still works beside the managed ones.
    expect(await modelIds(running.url + '/v1', 'sk-test-env-key-9f8e7d')).toContain('local-chat');

    expect((await admin(`/keys/${created.id}`, { method: 'DELETE' })).status).toBe(200);
    await expect(client.chat.completions.create({ model: 'local-chat', messages: [{ role: 'user', content: 'Hi' }] })).rejects.toBeInstanceOf(
      OpenAI.AuthenticationError,
    );
    expect(await stop(running)).toMatchObject({ code: 0 });
  });

  it('a config without keys serves the keys made at run time; without an admin key it refuses to start, and /admin cannot be the basePath', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'infergate-keyless-'));
    try {
      const keyless = join(dir, 'keyless.json');
      await writeFile(keyless, JSON.stringify({ keyStore: { type: 'memory' } }));
      const underAdmin = join(dir, 'under-admin.json');
      await writeFile(underAdmin, JSON.stringify({ keys: [{ key: 'sk-a' }], basePath: '/admin/gw' }));
      const [noAdmin, clash] = await Promise.all([
        runCli(['--config', keyless, '--port', '0']).exit,
        runCli(['--config', underAdmin, '--port', '0'], { INFERGATE_ADMIN_KEY: ADMIN_KEY }).exit,
      ]);
      expect(noAdmin.code).toBe(1);
      expect(noAdmin.stderr).toContain('the config lists no keys and its keyStore is in memory');
      expect(clash.code).toBe(1);
      expect(clash.stderr).toContain('basePath "/admin/gw" is where the admin API is served');

      const running = await startCli(['--config', keyless, '--port', '0'], { INFERGATE_ADMIN_KEY: ADMIN_KEY });
      expect(running.stdout).toContain('API keys: from the config file (0)');
      const origin = new URL(running.url).origin;
      const made = await fetch(`${origin}/admin/keys`, {
        method: 'POST',
        body: '{}',
        headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
      });
      const { key } = (await made.json()) as { key: string };
      expect(await modelIds(running.url + '/v1', key)).toContain('local-chat');
      expect(await stop(running)).toMatchObject({ code: 0 });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('is not served without an admin key, and the start-up says so', async () => {
    const running = await startCli(['--port', '0'], { INFERGATE_API_KEY: 'sk-test-env-key-9f8e7d' });
    expect(running.stdout).toContain('Dashboard: not served (no admin key)');
    expect(running.stdout).not.toContain('Keys made at run time');
    expect((await fetch(new URL(running.url).origin + '/admin/status', { headers: { authorization: `Bearer ${ADMIN_KEY}` } })).status).toBe(404);
    await stop(running);
  });
});

/** What a user of `npm start` does next: a whole tool loop in each protocol with the official SDKs. */
describe('tool loops against the running CLI', () => {
  let running: Running;
  let openai: OpenAI;
  let anthropic: Anthropic;
  const key = 'sk-test-loop';
  const prompt = 'What is the weather in Paris?';
  const weatherResult = '{"temperature":21,"sky":"clear"}';
  const answer = `The get_weather tool returned: ${weatherResult}.`;
  const parameters = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false };

  beforeAll(async () => {
    running = await startCli(['--port', '0'], { INFERGATE_API_KEY: key });
    openai = new OpenAI({ baseURL: running.url + '/v1', apiKey: key, maxRetries: 0 });
    // The Anthropic SDK adds /v1 itself.
    anthropic = new Anthropic({ baseURL: running.url, apiKey: key, maxRetries: 0 });
  });
  afterAll(async () => {
    try {
      if (running) expect(await stop(running)).toMatchObject({ code: 0 });
    } finally {
      killChildren();
    }
  });

  it('Chat Completions: tool_calls, then the tool message, streamed', async () => {
    const tools: OpenAI.ChatCompletionTool[] = [{ type: 'function', function: { name: 'get_weather', parameters } }];
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: prompt }];
    const first = await openai.chat.completions.create({ model: 'local-chat', messages, tools });
    expect(first.choices[0]!.finish_reason).toBe('tool_calls');
    const call = first.choices[0]!.message.tool_calls![0]!;
    expect(call.type === 'function' && call.function).toMatchObject({ name: 'get_weather', arguments: '{"city":"Paris"}' });

    const stream = await openai.chat.completions.create({
      model: 'local-chat',
      tools,
      stream: true,
      messages: [...messages, first.choices[0]!.message, { role: 'tool', tool_call_id: call.id, content: weatherResult }],
    });
    const chunks: string[] = [];
    for await (const chunk of stream) if (chunk.choices[0]?.delta.content) chunks.push(chunk.choices[0].delta.content);
    expect(chunks.length).toBeGreaterThan(2);
    expect(chunks.join('')).toBe(answer);
  });

  it('Responses: function_call, then function_call_output, streamed', async () => {
    const tools: OpenAI.Responses.Tool[] = [{ type: 'function', name: 'get_weather', parameters, strict: true }];
    const stream = openai.responses.stream({ model: 'local-chat', input: prompt, tools });
    const first = await stream.finalResponse();
    const call = first.output.find((item) => item.type === 'function_call');
    expect(call).toMatchObject({ name: 'get_weather', arguments: '{"city":"Paris"}', call_id: expect.stringMatching(/^call_/) });

    const second = await openai.responses.create({
      model: 'local-chat',
      tools,
      input: [{ role: 'user', content: prompt }, call!, { type: 'function_call_output', call_id: call!.call_id, output: weatherResult }],
    });
    expect(second.output_text).toBe(answer);
  });

  it('Messages: tool_use, then tool_result, with reasoning first', async () => {
    const tools: Anthropic.Tool[] = [{ name: 'get_weather', input_schema: parameters as Anthropic.Tool.InputSchema }];
    const messages: Anthropic.MessageParam[] = [{ role: 'user', content: prompt }];
    const first = await anthropic.messages.stream({ model: 'local-reasoner', max_tokens: 1024, messages, tools }).finalMessage();
    expect(first.stop_reason).toBe('tool_use');
    expect(first.content[0]!.type).toBe('thinking');
    const toolUse = first.content.find((block) => block.type === 'tool_use');
    expect(toolUse).toMatchObject({ name: 'get_weather', input: { city: 'Paris' } });

    const second = await anthropic.messages.create({
      model: 'local-reasoner',
      max_tokens: 1024,
      tools,
      messages: [
        ...messages,
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUse!.type === 'tool_use' ? toolUse!.id : '', content: weatherResult }] },
      ],
    });
    expect(second.stop_reason).toBe('end_turn');
    expect(second.content.filter((block) => block.type === 'text').map((block) => (block.type === 'text' ? block.text : ''))).toEqual([answer]);
  });
});
