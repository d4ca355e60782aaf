import { parseObject, type Json } from '../../json.js';

/**
 * A tool call's raw JSON arguments as the object Anthropic's `tool_use.input` must be. Empty or
 * invalid arguments (a model cut off mid-call) become `{}`, as the Anthropic SDK does itself.
 */
export function toolInput(args: string): Json {
  return parseObject(args) ?? {};
}
