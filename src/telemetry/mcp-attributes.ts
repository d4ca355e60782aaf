import type { Attributes } from '@opentelemetry/api';
import { TOOL_SEPARATOR } from '../mcp/mcp-options.js';
import type { McpCallOutcome } from '../mcp/tool-call.js';
import type { McpToolCallEvent } from '../mcp/tool-call-event.js';

/*
 * A tool call's span, after the OpenTelemetry semantic conventions for MCP (development status,
 * open-telemetry/semantic-conventions-genai, docs/gen-ai/mcp.md): the gateway is the client's MCP
 * server, so one SERVER span per `tools/call`, named `tools/call {gen_ai.tool.name}`, with
 * `mcp.method.name`, `gen_ai.operation.name` `execute_tool`, `mcp.session.id`, `error.type`.
 * Never the arguments or the result (the conventions' opt-in `gen_ai.tool.call.*`).
 */

/** `error.type` of a call that failed, undefined for `ok`: `tool_error` as the conventions say, the JSON-RPC code of a refusal. */
export function toolCallErrorType(outcome: McpCallOutcome): string | undefined {
  if (outcome === 'ok') return undefined;
  if (outcome === 'refused') return '-32602';
  return outcome;
}

/** The tool's full name, `<server>__<tool>` (unshortened), or what the client sent when that matched no server. */
export function fullToolName(event: Pick<McpToolCallEvent, 'server' | 'tool'>): string {
  return event.server ? `${event.server}${TOOL_SEPARATOR}${event.tool}` : event.tool;
}

/** `tools/call {tool}`; a refused call's name is whatever the client sent, so not in the span name (low cardinality). */
export function toolCallSpanName(event: McpToolCallEvent): string {
  return event.outcome === 'refused' ? 'tools/call' : `tools/call ${fullToolName(event)}`;
}

export function toolCallAttributes(event: McpToolCallEvent): Attributes {
  const attributes: Attributes = {
    'mcp.method.name': 'tools/call',
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': fullToolName(event),
    'mcp.session.id': event.sessionId,
    'mcp.protocol.version': event.protocolVersion,
    'http.route': '/mcp',
    'infergate.request_id': event.requestId,
    'infergate.key_id': event.keyId,
    'infergate.mcp.server': event.server,
    'infergate.mcp.tool': event.tool,
    'infergate.mcp.outcome': event.outcome,
    'infergate.mcp.request_bytes': event.requestBytes,
    'infergate.mcp.response_bytes': event.responseBytes,
  };
  const error = toolCallErrorType(event.outcome);
  if (error) attributes['error.type'] = error;
  if (event.outcome === 'refused') attributes['rpc.response.status_code'] = '-32602';
  return attributes;
}
