import type { Json } from '../../json.js';

/** The `anthropic_version` Bedrock's Claude `invoke` endpoints take in the body. */
export const BEDROCK_ANTHROPIC_VERSION = 'bedrock-2023-05-31';

/**
 * A Messages body as Bedrock's `invoke` / `invoke-with-response-stream` take it: the model is in
 * the path and streaming is the endpoint's business, so `model` and `stream` go (Bedrock refuses
 * both as extraneous keys); `anthropic_version` is added, and the betas ride in the body
 * (`anthropic_beta`), where Bedrock reads them. The client's own `anthropic_beta` is replaced by
 * `betas`, which the caller filtered through the allowlist (`bedrockBetas`): kept, it would get
 * past it.
 */
export function invokeBody(body: Record<string, unknown>, betas: readonly string[]): Json {
  const { model: _model, stream: _stream, anthropic_beta: _clientBetas, ...rest } = body;
  return { ...rest, anthropic_version: BEDROCK_ANTHROPIC_VERSION, ...(betas.length > 0 ? { anthropic_beta: betas } : {}) };
}
