import { createParser, type EventSourceParser } from 'eventsource-parser';
import { upstreamInvalidResponse } from '../errors.js';
import { parseObject, type Json } from '../json.js';

/** One parsed server-sent event: `event:` name (absent for Chat Completions), `data:` text, `id:`. */
export interface SseMessage {
  event?: string;
  data: string;
  id?: string;
}

/**
 * Reads SSE bytes synchronously: `feed` takes one upstream read and hands each whole message to
 * `onMessage` before it returns, so a read is parsed in one pass with no promise per message. The
 * single `TextDecoder` in streaming mode keeps a UTF-8 character split across two reads intact.
 */
export class SseReader {
  private readonly decoder = new TextDecoder('utf-8');
  private readonly parser: EventSourceParser;
  private sink: (message: SseMessage) => void = () => {};

  constructor() {
    this.parser = createParser({
      onEvent: ({ event, data, id }) => {
        const message: SseMessage = { data };
        if (event !== undefined) message.event = event;
        if (id !== undefined) message.id = id;
        this.sink(message);
      },
    });
  }

  feed(chunk: Uint8Array, onMessage: (message: SseMessage) => void): void {
    this.sink = onMessage;
    this.parser.feed(this.decoder.decode(chunk, { stream: true }));
  }

  /**
   * The bytes ended. Some servers omit the blank line after their last event: it is ended here so
   * it is not lost. A cut event either fails to parse as JSON or lacks a terminal event, so this
   * never hides a cut.
   */
  end(onMessage: (message: SseMessage) => void): void {
    this.sink = onMessage;
    this.parser.feed(this.decoder.decode() + '\n\n');
  }
}

/** Parses an upstream SSE byte stream into messages (for the few readers that want one at a time). */
export async function* parseSse(bytes: AsyncIterable<Uint8Array>): AsyncGenerator<SseMessage> {
  const reader = new SseReader();
  const pending: SseMessage[] = [];
  const keep = (message: SseMessage) => pending.push(message);
  for await (const chunk of bytes) {
    reader.feed(chunk, keep);
    if (pending.length > 0) yield* pending.splice(0);
  }
  reader.end(keep);
  if (pending.length > 0) yield* pending.splice(0);
}

/** The JSON object an upstream event's `data` carries; anything else is the upstream failing (502). */
export function parseEventData(data: string, message = 'The upstream sent an invalid stream event'): Json {
  const event = parseObject(data);
  if (!event) throw upstreamInvalidResponse(message);
  return event;
}
