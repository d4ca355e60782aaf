import * as v from 'valibot';
import { anyValue, arrayOfObjects, arrayOfStrings, bool, int, looseObj, missing, model, obj, oneOf, str } from '../../schemas/common.js';

/**
 * The fields of a Responses request, typed: `POST /v1/responses` and those that take the same
 * body (compaction). `input` is any value, but `null` counts as absent: no upstream accepts it,
 * and "Missing required parameter: 'input'" is the honest answer.
 */
export const responsesRequestFields = {
  model: model(),
  input: v.custom<unknown>((value) => value !== null, missing()),
  instructions: v.optional(str()),
  previous_response_id: v.optional(str()),
  tools: v.optional(arrayOfObjects()),
  tool_choice: v.optional(anyValue()),
  reasoning: v.optional(obj()),
  service_tier: v.optional(anyValue()),
  prompt_cache_key: v.optional(str()),
  prompt_cache_options: v.optional(obj()),
  prompt_cache_retention: v.optional(str()),
  stream: v.optional(bool()),
  max_output_tokens: v.optional(int({ min: 1 })),
  store: v.optional(bool()),
  metadata: v.optional(obj()),
  truncation: v.optional(oneOf(['auto', 'disabled'])),
  // Sent by Codex on every turn.
  parallel_tool_calls: v.optional(bool()),
  include: v.optional(arrayOfStrings()),
  text: v.optional(obj()),
  client_metadata: v.optional(obj()),
};

/** `POST /v1/responses` and `/responses` (spec 2.2). */
export const responsesRequestSchema = looseObj(responsesRequestFields, 'a JSON object');

export type ResponseRequest = v.InferOutput<typeof responsesRequestSchema>;
