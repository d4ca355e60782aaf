import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { upstreamInvalidResponse } from '../errors.js';
import { parseObject, type Json } from '../json.js';

/** One parsed server-sent event: `event:` name (absent for Chat Completions), `data:` text, `id:`. */
export interface SseMessage {
  event?: string;
  data: string;
  id?: string;
}

/**
 * Parses an upstream SSE byte stream into messages. One decode and one parser feed per chunk (no
 * chain of Web streams on the hot path); the single `TextDecoder` in streaming mode keeps a UTF-8
 * character split across two chunks intact.
 */
export async function* parseSse(bytes: AsyncIterable<Uint8Array>): AsyncGenerator<SseMessage> {
  const pending: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (message) => pending.push(message) });
  const decoder = new TextDecoder('utf-8');

  for await (const chunk of bytes) {
    parser.feed(decoder.decode(chunk, { stream: true }));
    if (pending.length > 0) yield* drain(pending);
  }
  // Some servers omit the blank line after their last event: end it so it is not lost. A cut
  // event either fails to parse as JSON or lacks a terminal event, so this never hides a cut.
  parser.feed(decoder.decode() + '\n\n');
  if (pending.length > 0) yield* drain(pending);
}

function* drain(pending: EventSourceMessage[]): Generator<SseMessage> {
  const batch = pending.splice(0, pending.length);
  for (const { event, data, id } of batch) {
    const message: SseMessage = { data };
    if (event !== undefined) message.event = event;
    if (id !== undefined) message.id = id;
    yield message;
  }
}

/** The JSON object an upstream event's `data` carries; anything else is the upstream failing (502). */
export function parseEventData(data: string, message = 'The upstream sent an invalid stream event'): Json {
  const event = parseObject(data);
  if (!event) throw upstreamInvalidResponse(message);
  return event;
}
