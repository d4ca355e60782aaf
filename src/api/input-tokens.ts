import * as v from 'valibot';
import type { RouteContext } from '../http/route.js';
import { responsesClient } from '../protocols/responses/index.js';
import { anyValue, arrayOfObjects, looseObj, model, str } from '../schemas/common.js';
import { expandedConversation } from './conversation-state.js';
import { checkStateReferences } from './model-rules.js';
import { handleTokenCount, type TokenCountEndpoint } from './token-count.js';

/**
 * `POST /v1/responses/input_tokens` takes a Responses body in which everything is optional;
 * the gateway needs `model` to know whose tokens to count.
 */
const inputTokensSchema = looseObj(
  {
    model: model(),
    input: v.optional(anyValue()),
    instructions: v.optional(v.nullable(str())),
    tools: v.optional(v.nullable(arrayOfObjects())),
    previous_response_id: v.optional(v.nullable(str())),
  },
  'a JSON object',
);

const inputTokens: TokenCountEndpoint = {
  protocol: 'responses',
  endpoint: '/v1/responses/input_tokens',
  schema: inputTokensSchema,
  prepare: (context, body, model) => {
    checkStateReferences(model, body);
    return expandedConversation(context, body);
  },
  decode: (body, upstreamModel) => responsesClient.decodeRequest(withoutNulls(body), upstreamModel),
  answer: (tokens) => ({ object: 'response.input_tokens', input_tokens: tokens }),
  forPassthrough: responsesClient.forPassthrough!,
};

/** POST /v1/responses/input_tokens: the Responses upstream's count, or a tokenizer's. */
export function countInputTokens(context: RouteContext): Promise<Response> {
  return handleTokenCount(context, inputTokens);
}

/** The SDK sends absent fields as `null`; a count of nothing is a count of an empty input. */
function withoutNulls(body: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { input: [] };
  for (const [name, value] of Object.entries(body)) if (value !== null) out[name] = value;
  return out;
}
