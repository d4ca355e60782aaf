/**
 * The vendor of a Bedrock model id: `anthropic` in `anthropic.claude-…`, in a cross-region
 * inference profile (`us.` / `eu.` / `apac.` / `global.anthropic.claude-…`) and in an ARN that
 * ends with one (`arn:aws:bedrock:…:inference-profile/us.anthropic.claude-…`). An application
 * inference profile's ARN names no model: its family is unknown (undefined).
 */
export function bedrockFamily(modelId: string): string | undefined {
  const id = modelId.startsWith('arn:') ? modelId.slice(modelId.lastIndexOf('/') + 1) : modelId;
  const match = /^(?:(?:us|us-gov|eu|apac|global|jp|au|ca)\.)?([a-z0-9-]+)\./.exec(id);
  return match?.[1];
}

export function isBedrockClaude(modelId: string): boolean {
  return bedrockFamily(modelId) === 'anthropic';
}
