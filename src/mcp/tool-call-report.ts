import type { RouteContext } from '../http/route.js';
import { runObserver } from '../plugins/run-observer.js';
import type { Session } from './mcp-route.js';
import type { McpToolCall } from './tool-call.js';
import type { McpToolCallEvent } from './tool-call-event.js';

/** Tells the plugins' `onToolCall` stage of one tool call of `session`; never throws, never awaited (as `onUsage`). */
export function reportToolCall(context: RouteContext, session: Session, call: McpToolCall): void {
  const { options, requestId, key, request } = context;
  const event: McpToolCallEvent = {
    requestId,
    keyId: key.id,
    keyGroup: key.group ?? 'default',
    sessionId: session.id,
    protocolVersion: session.record.protocolVersion,
    startedAt: Date.now() - call.durationMs,
    ...call,
  };
  for (const plugin of options.plugins) {
    if (plugin.onToolCall) void runObserver(options.logger, 'onToolCall observer', requestId, () => plugin.onToolCall!(event, request));
  }
}
