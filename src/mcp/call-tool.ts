import type { CallToolRequest, CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { forwardLogs } from './call-logs.js';
import { type ClientRequestExtra, forwardingOptions, withoutProgressToken } from './call-notifications.js';
import { withCancellationDelivered } from './cancellation-delivery.js';
import { inFlightCalls } from './in-flight-calls.js';
import { TOOL_SEPARATOR } from './mcp-options.js';
import type { McpRequestContext } from './mcp-session.js';
import type { McpCallOutcome } from './tool-call.js';
import { mayBeShortened, routeName } from './tool-names.js';
import { mayReach, mayUse } from './tool-scope.js';
import { upstreamRpcError } from './upstream-errors.js';
import { isUpstreamTimeout } from './upstream-timeout.js';
import { unshorten } from './upstream-tools.js';
import { withUpstream } from './with-upstream.js';
import { rpcError } from './upstreams.js';

/**
 * One `tools/call`: routed by its name, checked against the key's scope (out of scope answers as
 * an unknown tool does, so a key learns nothing of what it may not use), forwarded with the
 * client's progress, cancelled by the client's `notifications/cancelled` or by the client going
 * away, and observed once whatever its end.
 */
export async function callTool(context: McpRequestContext, request: CallToolRequest, extra: ClientRequestExtra): Promise<CallToolResult> {
  const started = performance.now();
  const requested = request.params.name;
  const routed = routeName(requested, context.options.servers);
  const requestBytes = byteLength(request.params);
  let tool = routed?.name ?? requested;
  const observe = (outcome: McpCallOutcome, answer: unknown, error?: string) =>
    context.observeCall({
      server: routed?.server ?? '',
      tool,
      outcome,
      durationMs: performance.now() - started,
      requestBytes,
      responseBytes: byteLength(answer),
      ...(error !== undefined ? { error } : {}),
      ...(context.options.captureArguments ? { arguments: request.params.arguments } : {}),
    });
  const cancellation = new AbortController();
  const signal = AbortSignal.any([context.signal, extra.signal, cancellation.signal]);
  const settled = inFlightCalls(context.upstreams).add(context.sessionId, extra.requestId, (reason) => cancellation.abort(reason));
  try {
    if (routed && mayReach(context.key, routed.server) && mayBeShortened(requested))
      tool = (await unshorten(context, routed.server, requested, signal).catch(() => undefined)) ?? tool;
    if (!routed || !mayUse(context.key, `${routed.server}${TOOL_SEPARATOR}${tool}`, routed.server)) {
      const refusal = rpcError(-32602, `Unknown tool: ${requested}`);
      observe('refused', { code: -32602, message: refusal.message });
      throw refusal;
    }
    const { server } = routed;
    const options = forwardingOptions(extra, signal);
    const params = { ...request.params, name: tool, _meta: withoutProgressToken(request.params._meta) };
    try {
      const result = (await withUpstream(context, server, signal, (client) =>
        withCancellationDelivered(client, () => {
          forwardLogs(client, context, extra);
          return client.callTool(params, undefined, options);
        }),
      )) as CallToolResult;
      observe(result.isError === true ? 'tool_error' : 'ok', result);
      return result;
    } catch (error) {
      const answer = upstreamRpcError(error);
      observe(
        signal.aborted ? 'cancelled' : isUpstreamTimeout(error) ? 'timeout' : 'upstream_error',
        { code: answer.code, message: answer.message },
        answer.message,
      );
      throw answer;
    }
  } finally {
    settled();
  }
}

/** The size of `value`'s JSON in UTF-8, counted without encoding a copy of it. */
function byteLength(value: unknown): number {
  return value === undefined ? 0 : Buffer.byteLength(JSON.stringify(value));
}
