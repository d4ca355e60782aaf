import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfigFile, parseConfig } from '../src/config.js';
import { createGateway } from '../src/gateway.js';
import { deploymentCharges } from '../src/policy/budget-free-model.js';
import { jsonSyntaxErrorPosition } from '../src/json-syntax-error.js';

/** The example of the issue, as written there. */
const issueExample = {
  keys: [{ key: 'sk-a', models: ['*'], group: 'default', disabled: false }],
  providers: {
    oai: { type: 'openai', baseURL: 'https://api.openai.com/v1', apiKey: 'sk-upstream', responses: true },
    claude: { type: 'anthropic', baseURL: 'https://api.anthropic.com', apiKey: 'sk-ant-upstream' },
    local: { type: 'local' },
  },
  models: [
    { id: 'gpt-x', provider: 'oai', upstreamModel: 'gpt-4.1', groups: ['default'] },
    { id: 'img-x', provider: 'oai', upstreamModel: 'gpt-image-1', kind: 'image', family: 'gpt-image' },
    { id: 'seedream-x', provider: 'oai', upstreamModel: 'seedream-4', kind: 'image', family: 'seedream' },
    { id: 'video-x', provider: 'oai', upstreamModel: 'sora-2', kind: 'video' },
    { id: 'tts-x', provider: 'oai', upstreamModel: 'tts-1', kind: 'speech' },
  ],
};

/** The problems a config yields, one `path: message` line each. */
function issuesOf(json: unknown): string[] {
  try {
    parseConfig(json, 'test.json');
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    const issues = (error as ConfigError).issues;
    expect((error as Error).message).toBe(`Invalid test.json:\n${issues.map((issue) => `  - ${issue}`).join('\n')}`);
    return [...issues];
  }
  throw new Error('expected the config to be rejected');
}

const minimal = { keys: [{ key: 'sk-a' }] };

describe('parseConfig', () => {
  it('accepts the example of the issue and builds its providers', () => {
    const config = parseConfig(issueExample);
    expect(config.keys).toEqual(issueExample.keys);
    expect(Object.keys(config.providers)).toEqual(['oai', 'claude', 'local']);
    expect(config.providers.oai!.type).toBe('openai');
    expect(config.providers.claude!.type).toBe('anthropic');
    expect(config.providers.local!.type).toBe('local');
    expect(config.models).toEqual(issueExample.models);
  });

  it('accepts the example of the README', async () => {
    const readme = await readFile(new URL('../README.md', import.meta.url), 'utf8');
    const section = readme.slice(readme.indexOf('### Config file'));
    const block = /```json\n([\s\S]*?)```/.exec(section)?.[1];
    expect(block).toBeDefined();
    const config = parseConfig(JSON.parse(block!), 'README.md');
    expect(config.models.map((model) => model.id)).toContain('gpt-x');
  });

  it("accepts the README's configuration essentials (the Vertex key file, which is not here, swapped for a token)", async () => {
    const readme = await readFile(new URL('../README.md', import.meta.url), 'utf8');
    const section = readme.slice(readme.indexOf('## Configuration essentials'));
    const file = JSON.parse(/```json\n([\s\S]*?)```/.exec(section)![1]!);
    const { credentials: _file, ...vertex } = file.providers.vtx;
    file.providers.vtx = { ...vertex, accessToken: 'ya29.test' };
    const config = parseConfig(file, 'README.md');
    expect(Object.keys(config.providers)).toEqual(['oai', 'claude', 'vllm', 'gem', 'vtx', 'aws', 'az', 'azv1']);
    expect(config.models.map((model) => model.id)).toContain('openai/*');
    // Its key has a budget: every model it lists must have a price, or that key would be refused it.
    const gateway = createGateway({ ...config, logger: false });
    const runtime = gateway.options;
    for (const id of config.models.map((model) => model.id.replace('*', 'gpt-4.1'))) {
      expect(deploymentCharges(runtime.catalog.get(id)!, runtime), id).not.toContain('unpriced');
    }
    await Promise.all(Object.values(config.providers).map((provider) => provider.close?.()));
  });

  it('defaults to the local provider and its models', () => {
    const config = parseConfig(minimal);
    expect(Object.keys(config.providers)).toEqual(['local']);
    expect(config.models).toEqual([
      { id: 'local-chat', provider: 'local' },
      { id: 'local-reasoner', provider: 'local' },
      { id: 'local-image', provider: 'local', kind: 'image' },
      { id: 'local-video', provider: 'local', kind: 'video' },
      { id: 'local-speech', provider: 'local', kind: 'speech' },
      { id: 'local-embedding', provider: 'local', kind: 'embedding' },
      { id: 'local-transcription', provider: 'local', kind: 'transcription' },
    ]);
    const named = parseConfig({ ...minimal, providers: { offline: { type: 'local', chunkDelayMs: 0 } } });
    expect(named.models.map((model) => model.provider)).toEqual(['offline', 'offline', 'offline', 'offline', 'offline', 'offline', 'offline']);
  });

  it('passes the gateway options and the listen address through', () => {
    const config = parseConfig({
      ...minimal,
      basePath: '/ai',
      messages: false,
      contractVersion: '2025-01-02',
      limits: { jsonBodyBytes: 1024 },
      port: 0,
      host: '0.0.0.0',
    });
    expect(config).toMatchObject({
      basePath: '/ai',
      messages: false,
      contractVersion: '2025-01-02',
      limits: { jsonBodyBytes: 1024 },
      port: 0,
      host: '0.0.0.0',
    });
  });

  it("takes a first-byte timeout on a model and as the retry policy's default, in whole ms", () => {
    const config = parseConfig({
      ...minimal,
      providers: { oai: { type: 'openai', apiKey: 'sk-upstream' } },
      models: [{ id: 'gpt-x', provider: 'oai', firstByteTimeoutMs: 8000 }],
      policies: { retry: { firstByteTimeoutMs: 15000 } },
    });
    expect(config.models[0]).toMatchObject({ firstByteTimeoutMs: 8000 });
    expect(config.policies).toMatchObject({ retry: { firstByteTimeoutMs: 15000 } });
    expect(
      issuesOf({
        ...minimal,
        providers: { oai: { type: 'openai', apiKey: 'sk-upstream' } },
        models: [{ id: 'gpt-x', provider: 'oai', firstByteTimeoutMs: -1 }],
        policies: { retry: { firstByteTimeoutMs: 1.5 } },
      }),
    ).toEqual(['models[0].firstByteTimeoutMs: expected a number >= 0, got -1', 'policies.retry.firstByteTimeoutMs: expected an integer, got 1.5']);
  });

  it('names the path of every bad field', () => {
    expect(
      issuesOf({
        keys: [{ key: '' }, { key: 'sk-b', models: 5 }, 3],
        providers: {
          oai: { type: 'openai', baseURL: 'api.openai.com', responses: 'yes' },
          odd: { type: 'sagemaker' },
          notype: {},
          'my-local': { type: 'local', chunkDelayMs: -1 },
        },
        models: [{ id: 'a', provider: 'oai', kind: 'audio', groups: 'default' }, { provider: 'oai' }],
        port: 70000,
        contractVersion: 'today',
        basePath: 'ai',
      }),
    ).toEqual([
      'keys[0].key: expected a non-empty string',
      'keys[1].models: expected "*" or an array of model ids, got 5',
      'keys[2]: expected an object, got 3',
      'providers.oai.baseURL: expected a URL string, got "api.openai.com"',
      'providers.oai.responses: expected true or false, got "yes"',
      'providers.odd.type: expected one of "local", "openai", "anthropic", "ark", "gemini", "vertex", "azure", "bedrock", got "sagemaker"',
      'providers.notype.type: expected one of "local", "openai", "anthropic", "ark", "gemini", "vertex", "azure", "bedrock", but it is missing',
      'providers.my-local.chunkDelayMs: expected a number >= 0, got -1',
      'models[0].kind: expected one of "text", "image", "video", "speech", "embedding", "transcription", got "audio"',
      'models[0].groups: expected an array of group names, got "default"',
      'models[1].id: required field is missing',
      'basePath: expected a path starting with "/", got "ai"',
      'contractVersion: expected a date YYYY-MM-DD, got "today"',
      'port: expected a port number 0-65535, got 70000',
    ]);
  });

  it('rejects unknown fields at every level', () => {
    expect(
      issuesOf({
        keys: [{ key: 'sk-a', modles: ['*'] }],
        providers: { local: { type: 'local', apiKey: 'x' }, oai: { type: 'openai', base_url: 'https://x.test/v1' } },
        models: [{ id: 'm', provider: 'local', upstream: 'local-chat' }],
        prots: 8080,
      }),
    ).toEqual([
      'keys[0].modles: unknown field (allowed: key, id, models, group, disabled, metadata, limits, balance, budget, cache, strictParams, storageUris, guardrails, mcp)',
      'providers.local.apiKey: unknown field (allowed: type, chunkDelayMs, videoRenderMs)',
      'providers.oai.base_url: unknown field (allowed: type, baseURL, apiKey, responses, chat, translateVia, headers, timeouts)',
      'models[0].upstream: unknown field (allowed: id, provider, upstreamModel, deployments, kind, family, groups, ownedBy, previousResponseId, serviceTierAuto, upstreamConversations, reasoning, strictParams, firstByteTimeoutMs, cache, price, guardrails)',
      'prots: unknown field (allowed: $schema, keys, providers, models, basePath, messages, contractVersion, limits, taskStore, policies, responseStore, usageStore, responseCache, videoRefreshIntervalMs, videoPoller, port, host, keyStore, requestLog, admin, metrics, mcp)',
    ]);
  });

  it('places a Redis store on one node, a cluster or Sentinel, exactly one of them', () => {
    const cluster = { nodes: ['10.0.0.1:6379', '10.0.0.2:6379'], password: 'p' };
    const sentinel = { sentinels: ['10.0.0.5:26379'], name: 'mymaster', db: 2 };
    const config = parseConfig({
      ...minimal,
      responseStore: { type: 'redis', cluster, ttlSeconds: 60 },
      usageStore: { type: 'redis', sentinel },
      policies: { limitStore: { type: 'redis', url: 'redis://r:6379' } },
    });
    expect(config.redisResponseStore).toEqual({ type: 'redis', cluster, ttlSeconds: 60 });
    expect(config.redisUsageStore).toEqual({ type: 'redis', sentinel });
    expect(config.redisLimitStore).toEqual({ type: 'redis', url: 'redis://r:6379' });
    const exactlyOne =
      'a redis store needs exactly one of "url", "cluster" ({ "nodes": ["host:port", …] }) or "sentinel" ({ "sentinels": ["host:port", …], "name" })';
    expect(
      issuesOf({
        ...minimal,
        taskStore: { type: 'redis' },
        responseStore: { type: 'redis', url: 'redis://r', cluster },
        usageStore: { type: 'redis', cluster: { nodes: [] } },
        responseCache: { store: { type: 'redis', sentinel: { sentinels: ['s:26379'] } } },
      }),
    ).toEqual([
      `taskStore: ${exactlyOne}`,
      `responseStore: ${exactlyOne}`,
      'usageStore.cluster.nodes: expected at least one "host:port", got 0',
      'responseCache.store.sentinel.name: required field is missing',
    ]);
  });

  it('takes the routing knobs under policies.routing, and names a bad one', () => {
    const routing = { latencyDecayMs: 5000, maxOpenMs: 60_000, degradedErrorRate: 0.5 };
    expect(parseConfig({ ...minimal, policies: { routing } }).policies).toEqual({ routing });
    expect(issuesOf({ ...minimal, policies: { routing: { degradedErrorRate: 1.5, latencyDecayMs: 0, slowMs: 1 } } })).toEqual([
      'policies.routing.latencyDecayMs: expected a number >= 1, got 0',
      'policies.routing.degradedErrorRate: expected a number <= 1, got 1.5',
      'policies.routing.slowMs: unknown field (allowed: latencyDecayMs, maxOpenMs, degradedErrorRate)',
    ]);
  });

  it("shares deployment health on the limit store's Redis, on its own Redis, or not at all", () => {
    const limitStore = { type: 'redis', url: 'redis://r:6379', keyPrefix: 'gw:' } as const;
    expect(parseConfig({ ...minimal, policies: { limitStore } }).redisHealthBus).toEqual(limitStore);
    const cluster = { type: 'redis', cluster: { nodes: ['10.0.0.1:6379'] } } as const;
    expect(parseConfig({ ...minimal, policies: { limitStore, healthBus: cluster } }).redisHealthBus).toEqual(cluster);
    expect(parseConfig({ ...minimal, policies: { healthBus: cluster } }).redisHealthBus).toEqual(cluster);
    const perProcess = parseConfig({ ...minimal, policies: { limitStore, healthBus: { type: 'memory' } } });
    expect(perProcess.redisHealthBus).toBeUndefined();
    expect(perProcess.policies).not.toHaveProperty('healthBus');
    expect(parseConfig({ ...minimal, policies: {} }).redisHealthBus).toBeUndefined();
    expect(issuesOf({ ...minimal, policies: { healthBus: { type: 'redis' } } })).toEqual([
      'policies.healthBus: a redis store needs exactly one of "url", "cluster" ({ "nodes": ["host:port", …] }) or "sentinel" ({ "sentinels": ["host:port", …], "name" })',
    ]);
  });

  it('checks what spans fields: providers of models, duplicates, a missing catalog', () => {
    expect(
      issuesOf({
        keys: [
          { key: 'sk-secret-1', id: 'a' },
          { key: 'sk-secret-1', id: 'a' },
        ],
        providers: { oai: { type: 'openai' } },
        models: [
          { id: 'm', provider: 'oia' },
          { id: 'm', provider: 'oai' },
        ],
      }),
    ).toEqual([
      'keys[1].key: the same key is listed twice',
      'keys[1].id: "a" is listed twice',
      'models[0].provider: "oia" is not a configured provider (configured: oai)',
      'models[1].id: "m" is listed twice',
    ]);
    expect(issuesOf({ ...minimal, providers: { oai: { type: 'openai' } } })).toEqual(['models: required when no provider of type "local" is configured']);
    const noKeys = 'keys: expected at least one key (or a "keyStore", whose keys the admin API makes)';
    expect(issuesOf({})).toEqual([noKeys]);
    expect(issuesOf({ keys: [] })).toEqual([noKeys]);
    // With a key store, keys are made at run time: none in the file is fine.
    expect(parseConfig({ keyStore: { type: 'memory' } }).keys).toEqual([]);
    expect(issuesOf([])).toEqual(['config: expected a JSON object, got an array']);
    expect(issuesOf('keys')).toEqual(['config: expected a JSON object, got string']);
  });

  it('never prints a key or an upstream API key back', () => {
    const issues = issuesOf({ keys: [{ key: 12345678 }, { key: 'sk-twice' }, { key: 'sk-twice' }], providers: { oai: { type: 'openai', apiKey: 87654321 } } });
    expect(issues.join('\n')).not.toMatch(/12345678|87654321|sk-twice/);
    expect(issues).toContain('keys[0].key: expected a string');
    expect(issues).toContain('providers.oai.apiKey: expected a string');
  });

  it('takes an admin key of 16 characters or more, and never prints a short one back', () => {
    expect(parseConfig({ keys: [{ key: 'sk-a' }], admin: { key: 'admin-0123456789abc' }, metrics: false })).toMatchObject({
      adminKey: 'admin-0123456789abc',
      metrics: false,
    });
    const issues = issuesOf({ keys: [{ key: 'sk-a' }], admin: { key: 'admin-short' } });
    expect(issues).toEqual(['admin.key: expected at least 16 characters']);
  });

  it('takes where run-time keys and the request log live: memory, PostgreSQL or Redis', () => {
    const keyStore = { type: 'postgres', url: 'postgres://gw:secret@db:5432/infergate', schema: 'gateway' } as const;
    const requestLog = {
      type: 'postgres',
      url: 'postgres://gw@db/infergate',
      batchSize: 200,
      flushMs: 500,
      queueSize: 10_000,
      overflow: 'wait',
      retentionDays: 7,
      content: { maxBytes: 4096 },
    } as const;
    const config = parseConfig({ ...minimal, keyStore, requestLog });
    expect(config).toMatchObject({ keyStoreConfig: keyStore, requestLogConfig: requestLog, captureContent: { maxBytes: 4096 } });
    const redis = { type: 'redis', cluster: { nodes: ['10.0.0.1:6379'] }, keyPrefix: 'gw:' } as const;
    expect(parseConfig({ ...minimal, keyStore: redis, requestLog: { type: 'memory', size: 500, content: true } })).toMatchObject({
      keyStoreConfig: redis,
      requestLogConfig: { type: 'memory', size: 500 },
      captureContent: true,
    });
    expect(parseConfig(minimal)).toMatchObject({ keyStoreConfig: undefined, requestLogConfig: undefined });
  });

  it("accepts the README's team example (examples/team/config.json): keys and the request log on PostgreSQL", async () => {
    const config = await loadConfigFile(new URL('../examples/team/config.json', import.meta.url).pathname);
    // No key in the file: every key is made through the admin API (no well-known key ships).
    expect(config).toMatchObject({ keys: [], keyStoreConfig: { type: 'postgres' }, requestLogConfig: { type: 'postgres' } });
  });

  it('names a bad keyStore or requestLog field, never printing a database password', () => {
    const issues = issuesOf({
      ...minimal,
      keyStore: { type: 'mysql', url: 'mysql://u:hunter2@db' },
      requestLog: { type: 'postgres', url: 'http://u:hunter2@db', schema: 'drop table', overflow: 'block', batchSize: 0, size: 10 },
    });
    expect(issues).toEqual([
      'keyStore.type: expected { "type": "memory" }, { "type": "postgres", "url": "postgres://…" } or { "type": "redis", "url": "redis://…" }, got "mysql"',
      'requestLog.url: expected a postgres:// URL, got "http://***@db"',
      'requestLog.schema: expected a plain SQL identifier (letters, digits and _), got "drop table"',
      'requestLog.batchSize: expected a number >= 1, got 0',
      'requestLog.overflow: expected "drop" or "wait", got "block"',
      'requestLog.size: unknown field (allowed: type, url, schema, batchSize, flushMs, queueSize, toolCallQueueSize, overflow, retentionDays, content)',
    ]);
    expect(issues.join('\n')).not.toContain('hunter2');
    expect(issuesOf({ ...minimal, keyStore: { type: 'redis', url: 'redis://r', sentinel: { sentinels: ['s:1'], name: 'm' } } })).toEqual([
      'keyStore: a redis store needs exactly one of "url", "cluster" ({ "nodes": ["host:port", …] }) or "sentinel" ({ "sentinels": ["host:port", …], "name" })',
    ]);
    expect(issuesOf({ ...minimal, requestLog: { type: 'memory', size: 0, content: 'yes' } })).toEqual([
      'requestLog.size: expected a number >= 1, got 0',
      'requestLog.content: expected true, false or { "maxBytes": … }, got "yes"',
    ]);
    expect(issuesOf({ ...minimal, requestLog: { type: 'postgres', url: 'postgres://db/x' }, usageStore: { type: 'memory' } })).toEqual([
      'usageStore: not used with a requestLog on PostgreSQL (GET /v1/usage reads its daily rollups); remove one of them',
    ]);
  });

  it("refuses a key's metadata that is not an object", () => {
    expect(issuesOf({ keys: [{ key: 'sk-a', metadata: ['x'] }] })).toEqual(['keys[0].metadata: expected an object, got Array']);
  });

  it('builds each configured provider with its type and native protocols', () => {
    const config = parseConfig(issueExample);
    expect(config.providers.oai).toMatchObject({ type: 'openai', text: { nativeProtocols: ['chat', 'responses'] } });
    expect(config.providers.claude).toMatchObject({ type: 'anthropic', text: { nativeProtocols: ['messages'] } });
    expect(config.providers.local).toMatchObject({ type: 'local' });
  });

  it('describes a Responses-only upstream with chat: false', () => {
    const models = [{ id: 'm', provider: 'oai' }];
    const config = parseConfig({ keys: [{ key: 'sk-a' }], providers: { oai: { type: 'openai', responses: true, chat: false } }, models });
    expect(config.providers.oai).toMatchObject({ text: { nativeProtocols: ['responses'] } });
    expect(issuesOf({ keys: [{ key: 'sk-a' }], providers: { oai: { type: 'openai', baseURL: 'http://vllm.internal/v1', chat: false } }, models })).toEqual([
      'providers.oai: openai provider: chat: false needs responses: true',
    ]);
  });
});

describe('loadConfigFile', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'infergate-config-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('reads and validates a JSON file, naming it in errors', async () => {
    const good = join(dir, 'good.json');
    await writeFile(good, '\uFEFF' + JSON.stringify(minimal));
    expect((await loadConfigFile(good)).keys).toEqual(minimal.keys);

    const bad = join(dir, 'bad.json');
    await writeFile(bad, JSON.stringify({ keys: [{ key: 'sk-a' }], providers: { oai: { type: 'openai', baseURL: 'nope' } } }));
    await expect(loadConfigFile(bad)).rejects.toThrow(`Invalid ${bad}:\n  - providers.oai.baseURL: expected a URL string, got "nope"`);
  });

  it('says when the file is missing or is not JSON', async () => {
    const missing = join(dir, 'missing.json');
    await expect(loadConfigFile(missing)).rejects.toThrow(`Cannot read config file ${missing}: no such file`);
    const broken = join(dir, 'broken.json');
    await writeFile(broken, '{ "keys": [ }');
    await expect(loadConfigFile(broken)).rejects.toThrow(`Config file ${broken} is not valid JSON: syntax error at line 1, column 13.`);
  });

  it('places a JSON syntax error by line and column, never quoting the text', () => {
    expect(jsonSyntaxErrorPosition('{"apiKey": sk-secret}')).toBe('line 1, column 12');
    expect(jsonSyntaxErrorPosition('{\n  "a": [1, 2,],\n}')).toBe('line 2, column 14');
    expect(jsonSyntaxErrorPosition('{"a": "b"')).toBe('line 1, column 10');
    expect(jsonSyntaxErrorPosition('{"a": 1} x')).toBe('line 1, column 10');
    expect(jsonSyntaxErrorPosition('{"a" 1}')).toBe('line 1, column 6');
    expect(jsonSyntaxErrorPosition('{"a": "line\nbreak"}')).toBe('line 1, column 7');
    // Nesting is walked without recursion.
    expect(jsonSyntaxErrorPosition(`${'['.repeat(200_000)}x`)).toBe('line 1, column 200001');
  });
});
