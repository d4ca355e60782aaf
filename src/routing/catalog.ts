import { setBounded } from '../bounded-map.js';
import { GatewayError } from '../errors.js';
import { echo } from '../http/echo.js';
import type { KeyRecord } from '../auth/key-store.js';
import { deploymentsOf, type Deployment } from './deployments.js';
import type { ModelConfig, ModelEntry, ModelKind } from './model.js';
import { isModelId, MODEL_ID_EXPECTED } from './model-id.js';
import { isWildcardId, matchWildcard, scopeIncludes, type WildcardEntry, wildcardIdProblem } from './wildcard.js';

/** Concrete entries made from wildcards, kept so each model id maps to one entry (bounded: ids come from clients). */
const CONCRETE_CACHE_SIZE = 1024;

/** The endpoints of each kind, named with new-api's `supported_endpoint_types` values. */
const endpointTypes: Record<ModelKind, readonly string[]> = {
  text: ['openai', 'openai-response', 'anthropic', 'gemini'],
  image: ['image-generation'],
  video: ['openai-video'],
  speech: ['openai-audio-speech'],
  embedding: ['embeddings'],
  transcription: ['openai-audio-transcription'],
};

export interface ModelListing {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
  supported_endpoint_types: string[];
}

export class ModelCatalog {
  private readonly byId = new Map<string, ModelEntry>();
  private readonly deploymentsById = new Map<string, Deployment[]>();
  private readonly wildcards: WildcardEntry[] = [];
  private readonly concrete = new Map<string, { entry: ModelEntry; deployments: Deployment[] }>();

  constructor(configs: readonly ModelConfig[], providerNames: readonly string[]) {
    const checkProvider = (name: unknown, where: string) => {
      if (typeof name !== 'string' || !providerNames.includes(name)) {
        throw new TypeError(`${where} "${String(name)}" is not a configured provider (have: ${providerNames.join(', ') || 'none'})`);
      }
    };
    for (const [index, config] of configs.entries()) {
      if (!config.id) throw new TypeError(`models[${index}].id must be a non-empty string`);
      if (!isModelId(config.id)) throw new TypeError(`models[${index}].id "${echo(config.id)}" cannot be named by a request: expected ${MODEL_ID_EXPECTED}`);
      const patternProblem = config.id.includes('*') ? wildcardIdProblem(config.id) : undefined;
      if (patternProblem) throw new TypeError(`models[${index}].id "${config.id}": ${patternProblem}`);
      if (this.byId.has(config.id)) throw new TypeError(`models[${index}].id "${config.id}" is listed twice`);
      if (config.deployments !== undefined && (!Array.isArray(config.deployments) || config.deployments.length === 0)) {
        throw new TypeError(`models[${index}].deployments must be a non-empty array`);
      }
      for (const [at, deployment] of (config.deployments ?? []).entries()) {
        checkProvider(deployment?.provider, `models[${index}].deployments[${at}].provider`);
        if (deployment.weight !== undefined && !(Number.isFinite(deployment.weight) && deployment.weight > 0)) {
          throw new TypeError(`models[${index}].deployments[${at}].weight must be a positive number`);
        }
      }
      const timeout = config.firstByteTimeoutMs;
      if (timeout !== undefined && !(Number.isInteger(timeout) && timeout >= 0))
        throw new TypeError(`models[${index}].firstByteTimeoutMs must be an integer >= 0`);
      const entry = { ...config, provider: config.provider ?? config.deployments?.[0]?.provider } as ModelEntry;
      checkProvider(entry.provider, `models[${index}].provider`);
      const deployments = deploymentsOf(entry);
      const ids = new Set(deployments.map((deployment) => deployment.id));
      if (ids.size !== deployments.length) throw new TypeError(`models[${index}].deployments: two deployments share an id; give them distinct \`id\`s`);
      if (isWildcardId(entry.id)) {
        this.wildcards.push({ prefix: entry.id.slice(0, -1), entry });
        continue;
      }
      this.byId.set(entry.id, entry);
      this.deploymentsById.set(entry.id, deployments);
    }
  }

  /** The model's deployments, normalized once at start. */
  deployments(model: ModelEntry): readonly Deployment[] {
    return this.deploymentsById.get(model.id) ?? this.concrete.get(model.id)?.deployments ?? deploymentsOf(model);
  }

  /** A listed model, or the concrete model a wildcard entry serves for `id`; for ids `resolve` let through (a client's id goes to `resolve`). */
  get(id: string): ModelEntry | undefined {
    return this.byId.get(id) ?? this.fromWildcard(id);
  }

  /**
   * The concrete entry a wildcard serves for `id`, remembered so that each id maps to one entry.
   * Asked for a client's `key`, only an entry that key may use is remembered: any key could
   * otherwise fill the cache with names of its choice before its scope is checked.
   */
  private fromWildcard(id: string, key?: KeyRecord): ModelEntry | undefined {
    if (this.wildcards.length === 0) return undefined;
    const known = this.concrete.get(id);
    if (known) return known.entry;
    const entry = matchWildcard(this.wildcards, id);
    if (!entry || (key && !this.allows(key, entry))) return entry;
    setBounded(this.concrete, id, { entry, deployments: deploymentsOf(entry) }, CONCRETE_CACHE_SIZE);
    return entry;
  }

  /** The configured entries, wildcard ones included (as configured, `*` and all). */
  *entries(): IterableIterator<ModelEntry> {
    yield* this.byId.values();
    for (const wildcard of this.wildcards) yield wildcard.entry;
  }

  /** Whether the key may use the model: listed in its scope and its group admitted. */
  allows(key: KeyRecord, entry: ModelEntry): boolean {
    const inScope = key.models === '*' || scopeIncludes(key.models, entry.id);
    const group = key.group ?? 'default';
    const inGroup = !entry.groups || entry.groups.includes(group);
    return inScope && inGroup;
  }

  /**
   * The entry a request may use, or the error to answer: an unknown model and one outside the
   * key's scope or group are the same 404 (as OpenAI answers both), so that a key cannot learn
   * which models exist beyond its own; wrong kind for the endpoint → 400.
   */
  resolve(key: KeyRecord, modelId: string, kind: ModelKind, endpoint: string): ModelEntry {
    const entry = this.byId.get(modelId) ?? this.fromWildcard(modelId, key);
    if (!entry || !this.allows(key, entry)) throw modelNotFound(modelId);
    if ((entry.kind ?? 'text') !== kind) {
      throw new GatewayError({
        status: 400,
        message: `The model \`${echo(modelId)}\` is a ${entry.kind ?? 'text'} model and is not served by ${endpoint}.`,
        param: 'model',
        code: 'model_not_supported',
      });
    }
    return entry;
  }

  /** The listing of `GET /v1/models` for a key. Wildcard entries are not listed: the names they serve are not known. */
  list(key: KeyRecord, options: { messagesEnabled: boolean }): ModelListing[] {
    const listing: ModelListing[] = [];
    for (const entry of this.byId.values()) {
      if (!this.allows(key, entry)) continue;
      const types = endpointTypes[entry.kind ?? 'text'].filter((type) => options.messagesEnabled || type !== 'anthropic');
      listing.push({
        id: entry.id,
        object: 'model',
        created: 0,
        owned_by: entry.ownedBy ?? entry.provider,
        supported_endpoint_types: [...types],
      });
    }
    return listing;
  }
}

/**
 * A model the key cannot use, whether it exists or not: 404 `model_not_found`, OpenAI's own answer
 * (Anthropic's and Google's APIs answer an unknown model with a 404 too, which their SDKs raise as
 * `NotFoundError` / `NOT_FOUND`).
 */
export function modelNotFound(modelId: string): GatewayError {
  return new GatewayError({
    status: 404,
    message: `The model \`${echo(modelId)}\` does not exist or you do not have access to it.`,
    param: 'model',
    code: 'model_not_found',
  });
}
