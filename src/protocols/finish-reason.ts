import type { IRAssistantPart, IRFinishReason } from './ir.js';

/**
 * Some upstreams report a plain stop even though the turn ends in tool calls. Agent loops on every
 * protocol key on the finish reason (`tool_calls` / `tool_use`) to run tools, so a turn with tool
 * calls that stopped normally is reported as a tool-call finish.
 */
export function effectiveFinishReason(reason: IRFinishReason, hasToolCalls: boolean): IRFinishReason {
  return hasToolCalls && reason === 'stop' ? 'tool_calls' : reason;
}

export function hasToolCall(content: readonly IRAssistantPart[]): boolean {
  return content.some((part) => part.type === 'tool_call');
}
