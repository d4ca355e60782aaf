import type { StreamDecoder } from '../../protocols/codec.js';
import { parseObject } from '../../json.js';

/** Azure's own chunks carry an empty id (`"id":""`), which OpenAI's never do. */
const EMPTY_ID = /"id"\s*:\s*""/;

/**
 * Leaves out the chunks Azure adds to a chat stream for its content filters: the first one,
 * `{"choices":[],"created":0,"id":"","model":"","prompt_filter_results":[…]}`, and, with
 * asynchronous filtering, annotation chunks (`content_filter_offsets`) with no delta. Read as
 * ordinary chunks they would open the translated answer with id "" and `created` 0; only
 * chunks with an empty id are parsed to check.
 */
export function withoutContentFilterChunks(decoder: StreamDecoder): StreamDecoder {
  return {
    push(message, out) {
      if (EMPTY_ID.test(message.data) && isFilterAnnotation(message.data)) return;
      decoder.push(message, out);
    },
    end: (out) => decoder.end(out),
    get finished() {
      return decoder.finished;
    },
  };
}

/** A chunk with an empty id that carries no delta, finish reason, usage or error: annotations only. */
function isFilterAnnotation(data: string): boolean {
  const chunk = parseObject(data);
  if (chunk?.id !== '' || chunk.error || chunk.usage) return false;
  const choices = Array.isArray(chunk.choices) ? (chunk.choices as unknown[]) : [];
  return choices.every((choice) => {
    const fields = choice as { delta?: unknown; finish_reason?: unknown } | null;
    return fields === null || typeof fields !== 'object' || (fields.delta === undefined && (fields.finish_reason ?? null) === null);
  });
}
