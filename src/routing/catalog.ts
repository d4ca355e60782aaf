import { GatewayError } from '../errors.js';
import type { KeyRecord } from '../auth/key-store.js';
import { deploymentsOf, type Deployment } from './deployments.js';
import type { ModelConfig, ModelEntry, ModelKind } from './model.js';

/** The endpoints of each kind, named with new-api's `supported_endpoint_types` values. */
const endpointTypes: Record<ModelKind, readonly string[]> = {
  text: ['openai', 'openai-response', 'anthropic', 'gemini'],
  image: ['image-generation'],
  video: ['openai-video'],
  speech: ['openai-audio-speech'],
  embedding: ['embeddings'],
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

  constructor(configs: readonly ModelConfig[], providerNames: readonly string[]) {
    const checkProvider = (name: unknown, where: string) => {
      if (typeof name !== 'string' || !providerNames.includes(name)) {
        throw new TypeError(`${where} "${String(name)}" is not a configured provider (have: ${providerNames.join(', ') || 'none'})`);
      }
    };
    for (const [index, config] of configs.entries()) {
      if (!config.id) throw new TypeError(`models[${index}].id must be a non-empty string`);
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
      const entry = { ...config, provider: config.provider ?? config.deployments?.[0]?.provider } as ModelEntry;
      checkProvider(entry.provider, `models[${index}].provider`);
      const deployments = deploymentsOf(entry);
      const ids = new Set(deployments.map((deployment) => deployment.id));
      if (ids.size !== deployments.length) throw new TypeError(`models[${index}].deployments: two deployments share an id; give them distinct \`id\`s`);
      this.byId.set(entry.id, entry);
      this.deploymentsById.set(entry.id, deployments);
    }
  }

  /** The model's deployments, normalized once at start. */
  deployments(model: ModelEntry): readonly Deployment[] {
    return this.deploymentsById.get(model.id) ?? deploymentsOf(model);
  }

  get(id: string): ModelEntry | undefined {
    return this.byId.get(id);
  }

  entries(): IterableIterator<ModelEntry> {
    return this.byId.values();
  }

  /** Whether the key may use the model: listed in its scope and its group admitted. */
  allows(key: KeyRecord, entry: ModelEntry): boolean {
    const inScope = key.models === '*' || key.models.includes(entry.id);
    const group = key.group ?? 'default';
    const inGroup = !entry.groups || entry.groups.includes(group);
    return inScope && inGroup;
  }

  /**
   * The entry a request may use, or the error to answer: unknown model → 400 naming it;
   * outside the key's scope or group → 403; wrong kind for the endpoint → 400.
   */
  resolve(key: KeyRecord, modelId: string, kind: ModelKind, endpoint: string): ModelEntry {
    const entry = this.byId.get(modelId);
    if (!entry) {
      throw new GatewayError({
        status: 400,
        message: `The model \`${modelId}\` does not exist.`,
        param: 'model',
        code: 'model_not_found',
      });
    }
    if (!this.allows(key, entry)) {
      throw new GatewayError({
        status: 403,
        message: `This API key is not allowed to use the model \`${modelId}\`.`,
        param: 'model',
        code: 'model_not_allowed',
      });
    }
    if ((entry.kind ?? 'text') !== kind) {
      throw new GatewayError({
        status: 400,
        message: `The model \`${modelId}\` is a ${entry.kind ?? 'text'} model and is not served by ${endpoint}.`,
        param: 'model',
        code: 'model_not_supported',
      });
    }
    return entry;
  }

  /** The listing of `GET /v1/models` for a key. */
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
