import { readFile } from 'node:fs/promises';
import * as v from 'valibot';
import { ADMIN_KEY_MIN_LENGTH } from './admin/admin-credential.js';
import { KeyStoreSchema, McpSessionStoreSchema, memoryOrRedis, type RedisStoreConfig, RequestLogSchema } from './config-stores.js';
import type { StaticKey } from './auth/key-store.js';
import { dateLabel, flag, nonNegativeInteger, positiveInteger, storageUriPrefixes, strictObject, text } from './config-fields.js';
import type { GatewayOptions } from './options.js';
import { BudgetSchema, GroupBudgetsSchema } from './policy/budget-schema.js';
import { GuardrailListSchema } from './guardrails/guardrail-schema.js';
import { KeyLimitsSchema, keySettingFields } from './auth/key-schema.js';
import { localModels } from './providers/local/local-provider.js';
import type { Provider } from './providers/provider.js';
import { ProviderConfigSchema, type ProviderConfig } from './providers/provider-config.js';
import { createProvider } from './providers/registry.js';
import type { ModelConfig } from './routing/model.js';
import { jsonSyntaxErrorPosition } from './json-syntax-error.js';
import { ModelPriceSchema } from './pricing/price-schema.js';
import type { McpOptions } from './mcp/mcp-options.js';
import { mcpFields } from './mcp/mcp-schema.js';
import { MemoryMcpSessionStore } from './mcp/session-store.js';

/**
 * The standalone server's JSON config file (docs/configuration.md, "Config file"): validated field by field,
 * unknown fields rejected so that a typo is loud, every error naming its path
 * (`providers.oai.baseURL: expected a URL string, got "api.openai.com"`).
 */

/** A config error: `issues` lists one `path: problem` line per bad field. */
export class ConfigError extends Error {
  readonly issues: readonly string[];

  constructor(heading: string, issues: readonly string[] = []) {
    super(issues.length === 0 ? heading : `${heading}\n${issues.map((issue) => `  - ${issue}`).join('\n')}`);
    this.name = 'ConfigError';
    this.issues = issues;
  }
}

/** What a config file gives: the gateway options, built providers included, and where to listen. */
export interface LoadedConfig extends GatewayOptions {
  keys: StaticKey[];
  providers: Record<string, Provider>;
  models: ModelConfig[];
  port?: number | undefined;
  host?: string | undefined;
  /** `taskStore` of type `redis`: the CLI opens it (the Redis store is an optional import). */
  redisTaskStore?: (RedisStoreConfig & { ttlSeconds?: number | undefined }) | undefined;
  /** `policies.limitStore` of type `redis`: the CLI opens a `RedisLimitEngine`. */
  redisLimitStore?: RedisStoreConfig | undefined;
  /**
   * Where the CLI opens a `RedisHealthBus`: `policies.healthBus` of type `redis`, else the Redis of
   * a `policies.limitStore` of type `redis` (instances sharing limits share health too), unless
   * `policies.healthBus` is `{ "type": "memory" }` (each process keeps its own).
   */
  redisHealthBus?: RedisStoreConfig | undefined;
  /** `responseStore` of type `redis`: the CLI opens a `RedisResponseStore`. */
  redisResponseStore?: (RedisStoreConfig & { ttlSeconds?: number | undefined }) | undefined;
  /** `responseCache.store` of type `redis`: the CLI opens a `RedisCacheStore`. */
  redisCacheStore?: RedisStoreConfig | undefined;
  /** `usageStore` of type `redis`: the CLI opens a `RedisUsageStore` (`GET /v1/usage` across restarts and instances). */
  redisUsageStore?: (RedisStoreConfig & { ttlSeconds?: number | undefined }) | undefined;
  /** `mcp.sessionStore` of type `redis`: the CLI opens a `RedisMcpSessionStore`. */
  redisMcpSessionStore?: (RedisStoreConfig & { ttlSeconds?: number | undefined; maxSessionsPerKey?: number | undefined }) | undefined;
  /** `keyStore`: where the admin API keeps keys made at run time (the CLI opens it). */
  keyStoreConfig?: KeyStoreConfig | undefined;
  /** `requestLog`: where each request's row goes (the CLI opens it; `content` became `captureContent`). */
  requestLogConfig?: RequestLogConfig | undefined;
  /** `admin.key`: the operator's credential for `/metrics` and `/admin` (`INFERGATE_ADMIN_KEY` wins). */
  adminKey?: string | undefined;
  /** `metrics`: serve `/metrics` to the admin key. Default: on when there is an admin key. */
  metrics?: boolean | undefined;
}

/** Reads, parses and validates a JSON config file; throws a `ConfigError` naming the file. */
export async function loadConfigFile(path: string): Promise<LoadedConfig> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new ConfigError(`Cannot read config file ${path}: ${code === 'ENOENT' ? 'no such file' : (error as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch {
    // Only where: V8's message quotes the text around the error, which may be a secret.
    throw new ConfigError(`Config file ${path} is not valid JSON: syntax error at ${jsonSyntaxErrorPosition(text.replace(/^\uFEFF/, ''))}.`);
  }
  return parseConfig(json, path);
}

/** Validates a parsed config and builds its providers; throws a `ConfigError` listing every bad field. */
export function parseConfig(json: unknown, source = 'config'): LoadedConfig {
  // Checked here because valibot's object schemas accept arrays (and would read `[].keys`).
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new ConfigError(`Invalid ${source}:`, [
      `config: expected a JSON object, got ${Array.isArray(json) ? 'an array' : json === null ? 'null' : typeof json}`,
    ]);
  }
  const result = v.safeParse(ConfigSchema, json);
  if (!result.success) throw new ConfigError(`Invalid ${source}:`, result.issues.map(describeIssue));
  const config = result.output;

  const providerConfigs: Record<string, ProviderConfig> = config.providers ?? { local: { type: 'local' } };
  const providerNames = Object.keys(providerConfigs);
  const firstLocal = providerNames.find((name) => providerConfigs[name]!.type === 'local');
  const models: ModelConfig[] = config.models ?? (firstLocal ? localModels(firstLocal) : []);
  const problems = [...crossCheckKeys(config.keys), ...crossCheckModels(models, providerNames)];
  if (config.keys.length === 0 && !config.keyStore) problems.push('keys: expected at least one key (or a "keyStore", whose keys the admin API makes)');
  if (config.requestLog?.type === 'postgres' && config.usageStore) {
    problems.push('usageStore: not used with a requestLog on PostgreSQL (GET /v1/usage reads its daily rollups); remove one of them');
  }
  if (!config.models && !firstLocal) problems.push('models: required when no provider of type "local" is configured');
  if (problems.length > 0) throw new ConfigError(`Invalid ${source}:`, problems);

  const providers: Record<string, Provider> = {};
  for (const name of providerNames) {
    try {
      providers[name] = createProvider(name, providerConfigs[name]!);
    } catch (error) {
      throw new ConfigError(`Invalid ${source}:`, [`providers.${name}: ${(error as Error).message}`]);
    }
  }

  return {
    keys: config.keys,
    providers,
    models,
    basePath: config.basePath,
    messages: config.messages,
    contractVersion: config.contractVersion,
    limits: config.limits,
    redisTaskStore: config.taskStore?.type === 'redis' ? config.taskStore : undefined,
    ...policiesOf(config.policies),
    redisResponseStore: config.responseStore?.type === 'redis' ? config.responseStore : undefined,
    redisUsageStore: config.usageStore?.type === 'redis' ? config.usageStore : undefined,
    ...responseCacheOf(config.responseCache),
    ...mcpOf(config.mcp),
    videoRefreshIntervalMs: config.videoRefreshIntervalMs,
    videoPoller: config.videoPoller,
    port: config.port,
    host: config.host,
    keyStoreConfig: config.keyStore,
    requestLogConfig: config.requestLog,
    captureContent: config.requestLog?.content,
    adminKey: config.admin?.key,
    metrics: config.metrics,
  };
}

/** The file's `policies`, split into gateway options and the Redis limit store and health bus the CLI opens. */
function policiesOf(policies: ConfigFile['policies']): Pick<LoadedConfig, 'policies' | 'redisLimitStore' | 'redisHealthBus'> {
  if (!policies) return {};
  const { limitStore, healthBus, ...rest } = policies;
  const redisLimitStore = limitStore?.type === 'redis' ? limitStore : undefined;
  const redisHealthBus = healthBus ? (healthBus.type === 'redis' ? healthBus : undefined) : redisLimitStore;
  return { policies: rest, redisLimitStore, redisHealthBus };
}

/** The file's `responseCache`, split into the gateway option and the Redis store the CLI opens. */
function responseCacheOf(cache: ConfigFile['responseCache']): Pick<LoadedConfig, 'responseCache' | 'redisCacheStore'> {
  if (!cache) return {};
  const { store, ...settings } = cache;
  return { responseCache: settings, redisCacheStore: store?.type === 'redis' ? store : undefined };
}

/** The file's `mcp`, split into the gateway option and the Redis session store the CLI opens. */
function mcpOf(mcp: ConfigFile['mcp']): Pick<LoadedConfig, 'mcp' | 'redisMcpSessionStore'> {
  if (!mcp) return {};
  const { sessionStore, ...settings } = mcp;
  const options = settings as McpOptions;
  if (sessionStore?.type !== 'redis') {
    return { mcp: sessionStore ? { ...options, sessionStore: new MemoryMcpSessionStore(sessionStore) } : options };
  }
  return { mcp: options, redisMcpSessionStore: sessionStore };
}

function crossCheckKeys(keys: readonly StaticKey[]): string[] {
  const problems: string[] = [];
  const seenKeys = new Set<string>();
  const seenIds = new Set<string>();
  keys.forEach((entry, index) => {
    // Never echo a key: the message may end up in logs.
    if (seenKeys.has(entry.key)) problems.push(`keys[${index}].key: the same key is listed twice`);
    seenKeys.add(entry.key);
    if (entry.id !== undefined) {
      if (seenIds.has(entry.id)) problems.push(`keys[${index}].id: "${entry.id}" is listed twice`);
      seenIds.add(entry.id);
    }
  });
  return problems;
}

function crossCheckModels(models: readonly ModelConfig[], providerNames: readonly string[]): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  models.forEach((model, index) => {
    if (seen.has(model.id)) problems.push(`models[${index}].id: "${model.id}" is listed twice`);
    seen.add(model.id);
    if (model.provider === undefined && !model.deployments) problems.push(`models[${index}]: needs a provider or deployments`);
    if (model.provider !== undefined && !providerNames.includes(model.provider)) {
      problems.push(`models[${index}].provider: "${model.provider}" is not a configured provider (configured: ${providerNames.join(', ') || 'none'})`);
    }
    model.deployments?.forEach((deployment, at) => {
      if (!providerNames.includes(deployment.provider)) {
        problems.push(
          `models[${index}].deployments[${at}].provider: "${deployment.provider}" is not a configured provider (configured: ${providerNames.join(', ') || 'none'})`,
        );
      }
    });
  });
  return problems;
}

// ---------------------------------------------------------------------------------------------
// Schemas. Each message says what was expected; `describeIssue` adds the path and what was found.

const KeySchema = strictObject({
  key: text,
  id: v.optional(text),
  models: v.optional(keySettingFields.models),
  group: v.optional(keySettingFields.group),
  disabled: v.optional(keySettingFields.disabled),
  metadata: v.optional(keySettingFields.metadata),
  limits: v.optional(keySettingFields.limits),
  balance: v.optional(v.number('expected a number')),
  budget: v.optional(keySettingFields.budget),
  cache: v.optional(flag),
  strictParams: v.optional(flag),
  storageUris: v.optional(storageUriPrefixes),
  guardrails: v.optional(keySettingFields.guardrails),
  mcp: v.optional(keySettingFields.mcp),
});

const DeploymentSchema = strictObject({
  provider: text,
  upstreamModel: v.optional(text),
  weight: v.optional(v.pipe(v.number('expected a number'), v.gtValue(0, 'expected a number > 0'))),
  id: v.optional(text),
});

const ModelSchema = strictObject({
  id: text,
  provider: v.optional(text),
  upstreamModel: v.optional(text),
  deployments: v.optional(v.pipe(v.array(DeploymentSchema, 'expected an array of deployments'), v.minLength(1, 'expected at least one deployment'))),
  kind: v.optional(
    v.picklist(
      ['text', 'image', 'video', 'speech', 'embedding', 'transcription'],
      'expected one of "text", "image", "video", "speech", "embedding", "transcription"',
    ),
  ),
  family: v.optional(text),
  groups: v.optional(v.array(text, 'expected an array of group names')),
  ownedBy: v.optional(text),
  previousResponseId: v.optional(flag),
  serviceTierAuto: v.optional(flag),
  upstreamConversations: v.optional(flag),
  reasoning: v.optional(flag),
  strictParams: v.optional(flag),
  firstByteTimeoutMs: v.optional(nonNegativeInteger),
  cache: v.optional(v.union([flag, strictObject({ allowSampling: v.optional(flag) })], 'expected true, false or { "allowSampling": true }')),
  price: v.optional(ModelPriceSchema),
  guardrails: v.optional(GuardrailListSchema),
});

const ConfigSchema = strictObject({
  /** Lets editors find a JSON schema; ignored. */
  $schema: v.optional(v.string('expected a string')),
  // May be empty with a `keyStore`: its keys are made at run time through the admin API.
  keys: v.optional(v.array(KeySchema, 'expected an array of keys'), []),
  providers: v.optional(v.record(text, ProviderConfigSchema, 'expected an object of provider names to provider configs')),
  models: v.optional(v.array(ModelSchema, 'expected an array of models')),
  basePath: v.optional(v.pipe(v.string('expected a string'), v.regex(/^(\/.*)?$/, 'expected a path starting with "/"'))),
  messages: v.optional(flag),
  contractVersion: v.optional(dateLabel),
  limits: v.optional(
    strictObject({
      jsonBodyBytes: v.optional(positiveInteger),
      uploadFileBytes: v.optional(positiveInteger),
      uploadFiles: v.optional(positiveInteger),
      uploadBodyBytes: v.optional(positiveInteger),
      headerBytes: v.optional(positiveInteger),
      messages: v.optional(positiveInteger),
      requestBodyTimeoutMs: v.optional(positiveInteger),
      streamIdleTimeoutMs: v.optional(positiveInteger),
    }),
  ),
  /** Where video tasks live: in memory (default) or Redis (`infergate/redis`, needs `ioredis`). */
  taskStore: memoryOrRedis({ ttlSeconds: v.optional(positiveInteger) }),
  /** Per-key limits, retries and fallback (docs/policies.md). */
  policies: v.optional(
    strictObject({
      limits: v.optional(KeyLimitsSchema),
      retry: v.optional(
        strictObject({
          retries: v.optional(nonNegativeInteger),
          backoffMs: v.optional(nonNegativeInteger),
          maxBackoffMs: v.optional(nonNegativeInteger),
          maxRetryAfterMs: v.optional(nonNegativeInteger),
          failuresBeforeCooldown: v.optional(nonNegativeInteger),
          cooldownMs: v.optional(nonNegativeInteger),
          firstByteTimeoutMs: v.optional(nonNegativeInteger),
        }),
      ),
      /** Choosing a deployment and its circuit breaker (docs/policies.md, "Choosing a deployment"). */
      routing: v.optional(
        strictObject({
          latencyDecayMs: v.optional(positiveInteger),
          maxOpenMs: v.optional(nonNegativeInteger),
          degradedErrorRate: v.optional(v.pipe(v.number('expected a number'), v.gtValue(0, 'expected a number > 0'), v.maxValue(1, 'expected a number <= 1'))),
        }),
      ),
      whenLimitsUnavailable: v.optional(v.picklist(['open', 'closed'], 'expected "open" or "closed"')),
      quotaRetryAfterSeconds: v.optional(positiveInteger),
      /** Dollar budgets (docs/policies.md, "Budgets"): every key's default, and each group's. */
      budget: v.optional(BudgetSchema),
      groupBudgets: v.optional(GroupBudgetsSchema),
      /** A model without a known price, to a key with a dollar budget: refused (default) or served at $0. */
      unpricedModels: v.optional(v.picklist(['refuse', 'allow'], 'expected "refuse" or "allow"')),
      /** Where limit counters live: memory (default) or Redis, shared by every instance. */
      limitStore: memoryOrRedis({}),
      /**
       * How instances share deployment health (open breakers, 429 backoffs): Redis, by default the
       * limit store's when that is Redis; `memory` keeps it per process.
       */
      healthBus: memoryOrRedis({}),
      /** Whose upstream prompt cache a client's prompt_cache_key names (docs/policies.md). */
      promptCacheKey: v.optional(v.picklist(['key', 'group', 'shared'], 'expected "key", "group" or "shared"')),
      /** Guardrails on every text request, and on each key group's (docs/policies.md, "Guardrails"). */
      guardrails: v.optional(GuardrailListSchema),
      groupGuardrails: v.optional(v.record(v.string(), GuardrailListSchema, 'expected an object of group names to guardrail lists')),
    }),
  ),
  /** Where finished Responses live for previous_response_id: memory (default) or Redis. */
  responseStore: memoryOrRedis({ ttlSeconds: v.optional(positiveInteger) }),
  /** Each key's usage by day and model for GET /v1/usage (docs/policies.md): memory (default) or Redis. */
  usageStore: memoryOrRedis({ ttlSeconds: v.optional(positiveInteger) }),
  /** The exact-match response cache (docs/policies.md): memory (default) or Redis. */
  responseCache: v.optional(
    strictObject({
      ttlSeconds: v.optional(positiveInteger),
      maxEntries: v.optional(positiveInteger),
      maxEntryBytes: v.optional(positiveInteger),
      allowSampling: v.optional(flag),
      store: memoryOrRedis({}),
    }),
  ),
  videoRefreshIntervalMs: v.optional(nonNegativeInteger),
  videoPoller: v.optional(
    v.union(
      [flag, strictObject({ intervalMs: v.optional(positiveInteger), batchSize: v.optional(positiveInteger) })],
      'expected true, false or { intervalMs?, batchSize? }',
    ),
  ),
  port: v.optional(v.pipe(nonNegativeInteger, v.maxValue(65535, 'expected a port number 0-65535'))),
  host: v.optional(text),
  /** Where keys made at run time through the admin API live (docs/admin.md, "Standalone server"). */
  keyStore: KeyStoreSchema,
  /** One row per request, read by the admin API and the dashboard: memory (default with an admin key) or PostgreSQL. */
  requestLog: RequestLogSchema,
  /** The operator's credential for the server's own routes (`/metrics`, `/admin`); `INFERGATE_ADMIN_KEY` wins. */
  admin: v.optional(strictObject({ key: v.optional(v.pipe(text, v.minLength(ADMIN_KEY_MIN_LENGTH, `expected at least ${ADMIN_KEY_MIN_LENGTH} characters`))) })),
  /** Metrics at `/metrics`, for the admin key (docs/metrics.md). Default: on when there is an admin key. */
  metrics: v.optional(flag),
  /** The MCP gateway at `/mcp` (docs/configuration.md, "mcp"): upstream servers and where sessions live. */
  mcp: v.optional(strictObject({ ...mcpFields, sessionStore: McpSessionStoreSchema })),
});

export type ConfigFile = v.InferOutput<typeof ConfigSchema>;
/** The file's `keyStore`. */
export type KeyStoreConfig = NonNullable<ConfigFile['keyStore']>;
/** The file's `requestLog`. */
export type RequestLogConfig = NonNullable<ConfigFile['requestLog']>;

/** `providers.oai.baseURL: expected a URL string, got "x"`. */
function describeIssue(issue: v.BaseIssue<unknown>): string {
  const keys = (issue.path ?? []).map((item) => item.key);
  const path = formatPath(keys);
  const last = keys.at(-1);
  // An unknown field, or a check across an object's fields: "got Object" would say nothing.
  const complete = (issue.type === 'strict_object' && issue.expected !== 'Object') || (issue.type === 'check' && issue.received === 'Object');
  // A secret in the wrong shape must not be printed back (headers and a child's environment carry them too).
  const secret = (typeof last === 'string' && /key|secret|token|password/i.test(last)) || keys.slice(0, -1).some((key) => key === 'headers' || key === 'env');
  let found = '';
  if (!complete && !secret) found = issue.received === 'undefined' ? ', but it is missing' : `, got ${withoutUserinfo(issue.received)}`;
  return `${path}: ${issue.message}${found}`;
}

/** A URL's `user:password@` (in a `baseURL` that did not parse, say) is printed as `***@`. */
function withoutUserinfo(received: string): string {
  return received.replace(/([a-z][\w+.-]*:\/\/)[^@"]*@/gi, '$1***@');
}

/** `["models", 0, "id"]` → `models[0].id`; the root is `config`. */
function formatPath(keys: readonly unknown[]): string {
  if (keys.length === 0) return 'config';
  let path = '';
  for (const key of keys) {
    if (typeof key === 'number') path += `[${key}]`;
    else if (typeof key === 'string' && /^[\w$-]+$/.test(key)) path += path ? `.${key}` : key;
    else path += `[${JSON.stringify(key)}]`;
  }
  return path;
}
