import { StaticKeyStore, type KeyRecord, type KeyStore, type StaticKey } from './auth/key-store.js';
import { ModelCatalog, type ModelEntry } from './routing/catalog.js';
import { MemoryTaskStore, type TaskStore } from './tasks/task-store.js';
import type { Provider } from './providers/provider.js';
import { createLocalProvider, localModels } from './providers/local/local-provider.js';
import type { IRUsage } from './protocols/ir.js';

/** Where the gateway writes what it has to say; keys and prompts never reach it. */
export interface Logger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

export interface UsageEvent {
  requestId: string;
  keyId: string;
  /** Public model id and the upstream one. */
  model: string;
  upstreamModel: string;
  provider: string;
  endpoint: string;
  usage: IRUsage;
  /** `ok`, or `error` when the request failed after it reached the provider. */
  status: 'ok' | 'error';
  latencyMs: number;
}

export interface RequestHookPayload {
  request: Request;
  requestId: string;
  serverContext: unknown;
  /** Answer now with this response; the gateway does nothing else for the request. */
  respondWith(response: Response): void;
}

export interface ResponseHookPayload {
  request: Request;
  requestId: string;
  response: Response;
  serverContext: unknown;
  /** Replace the response (e.g. to add headers). */
  setResponse(response: Response): void;
}

export interface GatewayHooks {
  /** Before routing and authentication. */
  onRequest?: (payload: RequestHookPayload) => void | Promise<void>;
  /** After the response is built, before it is sent. */
  onResponse?: (payload: ResponseHookPayload) => void | Promise<void>;
  /** Once per text request that reached a provider, with the normalized usage. */
  onUsage?: (event: UsageEvent) => void | Promise<void>;
}

export interface GatewayLimits {
  /** Largest JSON body accepted, in bytes. Default 32 MiB (Anthropic's own edge limit). */
  jsonBodyBytes?: number;
  /** Largest uploaded file in a multipart body (image edits), in bytes. Default 50 MiB. */
  uploadFileBytes?: number;
  /** Most files in one multipart body. Default 16. */
  uploadFiles?: number;
}

export interface GatewayOptions {
  /**
   * Who may call: a `KeyStore` or a list of static keys. Required: a gateway with no keys would
   * answer 401 to everyone, which is never what was meant.
   */
  keys: KeyStore | readonly StaticKey[];
  /** Upstreams by name. Default `{ local: createLocalProvider() }`. */
  providers?: Record<string, Provider>;
  /** The public model catalog. Default: the local provider's models. */
  models?: readonly ModelEntry[];
  /** Where video tasks live. Default: in memory. */
  taskStore?: TaskStore;
  /** Path prefix the gateway is mounted under, e.g. `/ai`. Default `''`. */
  basePath?: string;
  /**
   * Serve `/v1/messages`. Default true. The spec marks it "coming soon": when false it answers
   * 404 in the Anthropic shape and `/v1/models` stops offering `anthropic`.
   */
  messages?: boolean;
  /** Contract version label sent in `x-contract-version`. Default `2026-11-22`. */
  contractVersion?: string;
  limits?: GatewayLimits;
  hooks?: GatewayHooks;
  /** Default: JSON lines on stderr. Pass `false` to silence. */
  logger?: Logger | false;
}

/** Options after defaults and validation: what the gateway runs on. */
export interface ResolvedOptions {
  keyStore: KeyStore;
  providers: Record<string, Provider>;
  catalog: ModelCatalog;
  taskStore: TaskStore;
  basePath: string;
  messagesEnabled: boolean;
  contractVersion: string;
  limits: Required<GatewayLimits>;
  hooks: GatewayHooks;
  logger: Logger;
}

export const DEFAULT_CONTRACT_VERSION = '2026-11-22';

/** Validates options and fills defaults; throws a `TypeError` naming the bad option. */
export function resolveOptions(options: GatewayOptions): ResolvedOptions {
  if (!options || typeof options !== 'object') throw new TypeError('createGateway(options): options must be an object');
  const keyStore = resolveKeyStore(options.keys);
  const providers = options.providers ?? { local: createLocalProvider() };
  for (const [name, provider] of Object.entries(providers)) {
    if (!provider || typeof provider !== 'object' || typeof provider.type !== 'string') {
      throw new TypeError(`options.providers.${name} must be a Provider (an object with a string \`type\`)`);
    }
  }
  const models = options.models ?? (providers.local ? localModels('local') : []);
  const catalog = new ModelCatalog(models, Object.keys(providers));
  const basePath = normalizeBasePath(options.basePath ?? '');
  const contractVersion = options.contractVersion ?? DEFAULT_CONTRACT_VERSION;
  if (!/^\d{4}-\d{2}-\d{2}$/.test(contractVersion)) {
    throw new TypeError(`options.contractVersion must be a date YYYY-MM-DD, got "${contractVersion}"`);
  }
  const limits = {
    jsonBodyBytes: options.limits?.jsonBodyBytes ?? 32 * 1024 * 1024,
    uploadFileBytes: options.limits?.uploadFileBytes ?? 50 * 1024 * 1024,
    uploadFiles: options.limits?.uploadFiles ?? 16,
  };
  for (const [name, value] of Object.entries(limits)) {
    if (!Number.isInteger(value) || value < 1) throw new TypeError(`options.limits.${name} must be a positive integer`);
  }
  return {
    keyStore,
    providers,
    catalog,
    taskStore: options.taskStore ?? new MemoryTaskStore(),
    basePath,
    messagesEnabled: options.messages ?? true,
    contractVersion,
    limits,
    hooks: options.hooks ?? {},
    logger: options.logger === false ? silentLogger : (options.logger ?? jsonLogger),
  };
}

function resolveKeyStore(keys: GatewayOptions['keys']): KeyStore {
  if (keys === undefined || keys === null) {
    throw new TypeError('options.keys is required: a KeyStore or a list of { key, models?, group?, disabled? }');
  }
  if (Array.isArray(keys)) {
    for (const [index, entry] of (keys as StaticKey[]).entries()) {
      if (!entry || typeof entry.key !== 'string' || entry.key.length === 0) {
        throw new TypeError(`options.keys[${index}].key must be a non-empty string`);
      }
    }
    return new StaticKeyStore(keys as StaticKey[]);
  }
  if (typeof (keys as KeyStore).lookup !== 'function') {
    throw new TypeError('options.keys must be a KeyStore (with a lookup(key) method) or an array of keys');
  }
  return keys as KeyStore;
}

function normalizeBasePath(path: string): string {
  if (typeof path !== 'string') throw new TypeError('options.basePath must be a string');
  const trimmed = path.replace(/\/+$/, '');
  if (trimmed === '') return '';
  if (!trimmed.startsWith('/')) throw new TypeError(`options.basePath must start with "/", got "${path}"`);
  return trimmed;
}

const silentLogger: Logger = { info() {}, warn() {}, error() {} };

const jsonLogger: Logger = {
  info: (message, fields) => writeLog('info', message, fields),
  warn: (message, fields) => writeLog('warn', message, fields),
  error: (message, fields) => writeLog('error', message, fields),
};

function writeLog(level: string, message: string, fields?: Record<string, unknown>): void {
  process.stderr.write(JSON.stringify({ level, time: new Date().toISOString(), message, ...fields }) + '\n');
}

export type { KeyRecord };
