import { isGatewayError } from '../../errors.js';
import { asObject, type Json } from '../../json.js';
import { bareModelId } from '../../protocols/converse/model-family.js';
import type { CallContext, PassthroughRequest } from '../provider.js';
import { invokeBody } from './invoke-body.js';

/** A signed JSON call: the answer's JSON. */
type PostJson = (route: string, body: Json, call: CallContext) => Promise<{ json: unknown }>;

/**
 * Claude's token count on Bedrock (`POST /model/{id}/count-tokens`, `input.invokeModel.body` the
 * base64 of the `invoke` body), answered as Anthropic's `count_tokens` is (`input_tokens`), for
 * Messages clients. Bedrock counts on bare model ids only: a cross-region profile's geography
 * prefix is dropped, and an application inference profile (which names no model) is not
 * counted here. `max_tokens`, which counting does not take from the client but `invoke` requires,
 * is 1. A model Bedrock cannot count for resolves to undefined: the gateway's tokenizer counts.
 */
export async function countClaudeTokens(
  post: PostJson,
  model: string,
  request: PassthroughRequest,
  betas: readonly string[],
  call: CallContext,
): Promise<unknown> {
  const bare = bareModelId(model);
  if (bare === undefined) return undefined;
  const body = invokeBody({ ...request.body, max_tokens: 1 }, betas);
  try {
    const { json } = await post(
      `/model/${encodeURIComponent(bare)}/count-tokens`,
      { input: { invokeModel: { body: Buffer.from(JSON.stringify(body)).toString('base64') } } },
      call,
    );
    const tokens = asObject(json)?.inputTokens;
    return typeof tokens === 'number' ? { input_tokens: tokens } : undefined;
  } catch (error) {
    if (isGatewayError(error) && error.status === 400 && /support(s)? count/i.test(error.message)) return undefined;
    throw error;
  }
}
