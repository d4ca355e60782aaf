import type { RouteContext } from '../http/route.js';
import type { McpToolCall } from './tool-call.js';
import type { McpToolCallEvent } from './tool-call-event.js';

/** Tells the plugins' `onToolCall` stage of one tool call; never throws, never awaited (as `onUsage`). */
export function reportToolCall(context: RouteContext, call: McpToolCall): void {
  const { options, requestId, key, request } = context;
  // The route checked the session id against its record before the call ran; the SDK's transport checked the version.
  const protocolVersion = request.headers.get('mcp-protocol-version');
  const event: McpToolCallEvent = {
    requestId,
    keyId: key.id,
    keyGroup: key.group ?? 'default',
    sessionId: request.headers.get('mcp-session-id') ?? '',
    ...(protocolVersion ? { protocolVersion } : {}),
    startedAt: Date.now() - call.durationMs,
    ...call,
  };
  for (const plugin of options.plugins) {
    if (!plugin.onToolCall) continue;
    Promise.resolve()
      .then(() => plugin.onToolCall!(event, request))
      .catch((failure: unknown) =>
        options.logger.error('onToolCall observer failed', { requestId, message: failure instanceof Error ? failure.message : String(failure) }),
      );
  }
}
