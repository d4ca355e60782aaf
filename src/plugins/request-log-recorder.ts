import { rowOf, type RequestLogSink } from '../logs/request-log.js';
import { toolCallRowOf } from '../logs/tool-call-log.js';
import type { GatewayPlugin } from './plugin.js';

/**
 * Hands every usage event's row to the request log's sink. An observer: the gateway calls it after
 * the answer is built and never awaits it, so a slow, full or failing sink never delays or changes a
 * response (a throw or a rejected write is logged as any observer's). Refused requests (bad key,
 * over a limit, bad input) have no usage event and no row. Each MCP tool call's event is a row of
 * its own kind, for a sink that keeps them (`writeToolCall`).
 */
export function requestLogRecorder(sink: RequestLogSink): GatewayPlugin {
  return {
    onUsage(event) {
      return sink.write(rowOf(event));
    },
    ...(sink.writeToolCall
      ? {
          onToolCall(event) {
            return sink.writeToolCall!(toolCallRowOf(event));
          },
        }
      : {}),
  };
}
