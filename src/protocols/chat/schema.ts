import * as v from 'valibot';
import { anyValue, arrayOfObjects, bool, int, looseObj, missing, model, num, obj, str } from '../../schemas/common.js';

/**
 * One chat message: `role` a string (the roles themselves are the provider's business: `system`,
 * `developer`, `user`, `assistant`, `tool`, …) and `content` of any type, `null` included.
 *
 * Choice: `content` must be present, as the spec says, except on a message that carries
 * `tool_calls` (or the legacy `function_call`): OpenAI documents content as "required unless
 * tool_calls or function_call is specified", and SDKs send such assistant turns without it.
 */
export const chatMessageSchema = v.pipe(
  looseObj({ role: str(), content: v.optional(anyValue()) }),
  v.forward(
    v.check(
      (message) => 'content' in message || 'tool_calls' in message || 'function_call' in message,
      missing("A message may omit 'content' only when it has 'tool_calls'."),
    ),
    ['content'],
  ),
);

/** `POST /v1/chat/completions` (spec 2.3). */
export const chatRequestSchema = looseObj(
  {
    model: model(),
    messages: v.pipe(v.array(chatMessageSchema, 'a non-empty array of messages'), v.minLength(1, 'a non-empty array of messages')),
    stream: v.optional(bool()),
    stream_options: v.optional(obj()),
    tools: v.optional(arrayOfObjects()),
    tool_choice: v.optional(anyValue()),
    reasoning_effort: v.optional(str()),
    service_tier: v.optional(anyValue()),
    max_tokens: v.optional(int({ min: 1 })),
    max_completion_tokens: v.optional(int({ min: 1 })),
    temperature: v.optional(num()),
    top_p: v.optional(num()),
  },
  'a JSON object',
);

export type ChatMessage = v.InferOutput<typeof chatMessageSchema>;
export type ChatRequest = v.InferOutput<typeof chatRequestSchema>;
