import { rowOf, type RequestLogSink } from '../logs/request-log.js';
import type { GatewayPlugin } from './plugin.js';

/**
 * Hands every usage event's row to the request log's sink. An observer: the gateway calls it after
 * the answer is built and never awaits it, so a slow, full or failing sink never delays or changes a
 * response (a throw or a rejected write is logged as any observer's). Refused requests (bad key,
 * over a limit, bad input) have no usage event and no row.
 */
export function requestLogRecorder(sink: RequestLogSink): GatewayPlugin {
  return {
    onUsage(event) {
      return sink.write(rowOf(event));
    },
  };
}
