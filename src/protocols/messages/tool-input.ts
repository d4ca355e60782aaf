/**
 * A tool call's raw JSON arguments as the object Anthropic's `tool_use.input` must be. Empty or
 * invalid arguments (a model cut off mid-call) become `{}`, as the Anthropic SDK does itself.
 */
export function toolInput(args: string): Record<string, unknown> {
  if (args.trim() === '') return {};
  try {
    const value: unknown = JSON.parse(args);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
