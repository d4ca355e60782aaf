import { upstreamReportedError } from '../../errors.js';
import type { Json } from '../../json.js';
import { parseEventData, parseSse } from '../../protocols/sse-parse.js';
import { upstreamChunks, type UpstreamResult } from '../http/upstream-client.js';

/**
 * The JSON events of one of OpenAI's media streams (image generations and edits,
 * transcriptions), each typed by its own `type` or else by its SSE event name. `[DONE]` ends
 * them; an `error` event, or one carrying `error`, throws with the upstream's message (redacted)
 * and code. The body is released however the reading ends.
 */
export async function* mediaStreamEvents(result: UpstreamResult, what: string): AsyncGenerator<Json & { type: string }> {
  try {
    for await (const message of parseSse(upstreamChunks(result.body))) {
      if (message.data === '[DONE]') return;
      const event = parseEventData(message.data, `The upstream ${what} stream sent an event that is not JSON.`);
      const type = typeof event.type === 'string' ? event.type : (message.event ?? '');
      if (type === 'error' || event.error) {
        const detail = (event.error ?? event) as { message?: string; code?: string };
        const text = detail.message ?? `The upstream ${what} stream failed.`;
        throw upstreamReportedError(result.redact ? result.redact(text) : text, detail.code);
      }
      yield { ...event, type };
    }
  } finally {
    if (!result.body.destroyed) result.body.destroy();
  }
}
