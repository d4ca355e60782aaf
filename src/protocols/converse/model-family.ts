/** A cross-region inference profile's geography: `us.`, `eu.`, `global.`… */
const GEOGRAPHY = /^(?:us|us-gov|eu|apac|global|jp|au|ca)\./;

/**
 * The model id a Bedrock id names, without a cross-region inference profile's geography
 * (`us.` / `eu.` / `apac.` / `global.anthropic.claude-…` → `anthropic.claude-…`), also at the end
 * of an ARN (`arn:aws:bedrock:…:inference-profile/us.anthropic.claude-…`). An application
 * inference profile's ARN names no model: undefined.
 */
export function bareModelId(modelId: string): string | undefined {
  if (modelId.startsWith('arn:') && modelId.includes(':application-inference-profile/')) return undefined;
  const id = modelId.startsWith('arn:') ? modelId.slice(modelId.lastIndexOf('/') + 1) : modelId;
  return id.replace(GEOGRAPHY, '');
}

/**
 * The ids a price catalog may know a Bedrock model by, most specific first: a foundation model's
 * or inference profile's ARN reduced to the id it ends with, geography kept (the catalog prices
 * `global.` profiles apart), then without the geography. An ARN that names no model (application
 * inference profile, provisioned throughput, custom model) is left as it is: no catalog knows it.
 */
export function bedrockCatalogIds(modelId: string): string[] {
  const id = modelId.startsWith('arn:') ? /:(?:foundation-model|inference-profile)\/([^/]+)$/.exec(modelId)?.[1] : modelId;
  return id === undefined ? [modelId] : [...new Set([id, id.replace(GEOGRAPHY, '')])];
}

/** The vendor of a Bedrock model id (`anthropic` in `anthropic.claude-…`, see `bareModelId`); undefined when it names none. */
export function bedrockFamily(modelId: string): string | undefined {
  const bare = bareModelId(modelId);
  return bare === undefined ? undefined : /^([a-z0-9-]+)\./.exec(bare)?.[1];
}

export function isBedrockClaude(modelId: string): boolean {
  return bedrockFamily(modelId) === 'anthropic';
}
