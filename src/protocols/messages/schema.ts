import * as v from 'valibot';
import { anyValue, bool, int, looseObj, missing, model, obj, str } from '../../schemas/common.js';

/**
 * One Messages-API turn: `role` is `user`, `assistant` or `system` (instructions given in the
 * conversation, as Claude Code sends them), `content` any value. A system message may carry only
 * an `output_config`, so its `content` is optional.
 */
export const anthropicMessageSchema = v.pipe(
  looseObj({
    role: v.picklist(['user', 'assistant', 'system'], "'user', 'assistant' or 'system'"),
    content: v.optional(anyValue()),
  }),
  v.forward(
    v.check((message) => message.role === 'system' || message.content !== undefined, missing()),
    ['content'],
  ),
);

/**
 * A tool definition. Every tool has a `name`. Custom tools (no `type`, or `type: "custom"`) also
 * need an `input_schema` object; versioned server and client tools (`web_search_20250305`,
 * `bash_20250124`, …) carry their own fixed schema and send none.
 */
export const anthropicToolSchema = v.pipe(
  looseObj({
    type: v.optional(str()),
    name: str(),
    description: v.optional(str()),
    input_schema: v.optional(obj('an object (a JSON Schema)')),
  }),
  v.forward(
    v.check(
      (tool) => (tool.type !== undefined && tool.type !== 'custom') || 'input_schema' in tool,
      missing("A custom tool needs an 'input_schema' (a JSON Schema object)."),
    ),
    ['input_schema'],
  ),
);

/** `POST /v1/messages` (spec 2.4). */
export const messagesRequestSchema = looseObj(
  {
    model: model(),
    max_tokens: int({ min: 1 }),
    messages: v.pipe(v.array(anthropicMessageSchema, 'a non-empty array of messages'), v.minLength(1, 'a non-empty array of messages')),
    system: v.optional(anyValue()),
    tools: v.optional(v.array(anthropicToolSchema, 'an array of tool definitions')),
    tool_choice: v.optional(anyValue()),
    thinking: v.optional(obj()),
    stream: v.optional(bool()),
  },
  'a JSON object',
);

export type AnthropicMessage = v.InferOutput<typeof anthropicMessageSchema>;
export type AnthropicTool = v.InferOutput<typeof anthropicToolSchema>;
export type MessageRequest = v.InferOutput<typeof messagesRequestSchema>;
