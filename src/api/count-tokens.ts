import * as v from 'valibot';
import type { RouteContext } from '../http/route.js';
import { anyValue, looseObj, model, obj } from '../schemas/common.js';
import { anthropicMessageSchema, anthropicToolSchema, messagesClient } from '../protocols/messages/index.js';
import { handleTokenCount, type TokenCountEndpoint } from './token-count.js';

/** A Messages body without `max_tokens`, which counting does not take. */
const countTokensSchema = looseObj(
  {
    model: model(),
    messages: v.pipe(v.array(anthropicMessageSchema, 'a non-empty array of messages'), v.minLength(1, 'a non-empty array of messages')),
    system: v.optional(anyValue()),
    tools: v.optional(v.array(anthropicToolSchema, 'an array of tool definitions')),
    tool_choice: v.optional(anyValue()),
    thinking: v.optional(obj()),
  },
  'a JSON object',
);

const countTokens: TokenCountEndpoint = {
  protocol: 'messages',
  endpoint: '/v1/messages/count_tokens',
  schema: countTokensSchema,
  checkHeaders: messagesClient.checkHeaders!,
  decode: messagesClient.decodeRequest,
  answer: (tokens) => ({ input_tokens: tokens }),
  forPassthrough: messagesClient.forPassthrough!,
};

/** POST /v1/messages/count_tokens: Anthropic's count, or a tokenizer's for other upstreams. */
export function countMessageTokens(context: RouteContext): Promise<Response> {
  return handleTokenCount(context, countTokens);
}
