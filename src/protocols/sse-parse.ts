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
 *
 * Streams with LF line ends (every major API's) are split into frames here, with a fast path for
 * the one-line `data:` frame; a stream that shows a CR anywhere goes to `eventsource-parser`, which
 * takes every line ending the SSE spec allows, from that byte on.
 */
export class SseReader {
  private readonly decoder = new TextDecoder('utf-8');
  private parser: EventSourceParser | undefined;
  private sink: (message: SseMessage) => void = () => {};
  /** Text after the last blank line, while the stream is split here: kept in pieces, joined once its frame ends. */
  private rest: string[] = [];
  private started = false;

  feed(chunk: Uint8Array, onMessage: (message: SseMessage) => void): void {
    this.sink = onMessage;
    this.take(this.decoder.decode(chunk, { stream: true }));
  }

  /**
   * The bytes ended. Some servers omit the blank line after their last event: it is ended here so
   * it is not lost. A cut event either fails to parse as JSON or lacks a terminal event, so this
   * never hides a cut.
   */
  end(onMessage: (message: SseMessage) => void): void {
    this.sink = onMessage;
    this.take(this.decoder.decode() + '\n\n');
  }

  private take(text: string): void {
    if (!this.started && text !== '') {
      this.started = true;
      // A byte order mark may open the stream (the SSE spec drops it).
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    if (this.parser || text.includes('\r')) {
      this.generalParser().feed(this.rest.join('') + text);
      this.rest = [];
      return;
    }
    // No frame ends in this text (nor across its start): keep it, so a long frame is never
    // copied and searched again read after read.
    const last = this.rest.at(-1);
    if (!text.includes('\n\n') && !(text.startsWith('\n') && last?.endsWith('\n'))) {
      if (text !== '') this.rest.push(text);
      return;
    }
    const buffer = this.rest.length > 0 ? this.rest.join('') + text : text;
    let start = 0;
    for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n', start)) {
      this.frame(buffer, start, end);
      start = end + 2;
    }
    this.rest = start === buffer.length ? [] : [buffer.slice(start)];
  }

  /** One LF-ended frame, `buffer[start, end)`, by the SSE spec's field rules. */
  private frame(buffer: string, start: number, end: number): void {
    const newline = buffer.indexOf('\n', start);
    // The common frames: one `data: …` line, or `event: …` then `data: …` (Anthropic, Responses).
    if (newline < 0 || newline >= end) {
      if (buffer.startsWith('data: ', start)) {
        this.sink({ data: buffer.slice(start + 6, end) });
        return;
      }
    } else if (buffer.startsWith('event: ', start) && buffer.startsWith('data: ', newline + 1)) {
      const second = buffer.indexOf('\n', newline + 1);
      if ((second < 0 || second >= end) && newline > start + 7) {
        this.sink({ event: buffer.slice(start + 7, newline), data: buffer.slice(newline + 7, end) });
        return;
      }
    }
    let data: string | undefined;
    let event: string | undefined;
    let id: string | undefined;
    for (const line of buffer.slice(start, end).split('\n')) {
      const colon = line.indexOf(':');
      if (line === '' || colon === 0) continue; // blank, or a comment
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.charCodeAt(colon + 1) === 32 ? line.slice(colon + 2) : line.slice(colon + 1);
      if (field === 'data') data = data === undefined ? value : `${data}\n${value}`;
      else if (field === 'event') event = value;
      else if (field === 'id' && !value.includes('\u0000')) id = value;
    }
    if (data === undefined) return;
    const message: SseMessage = { data };
    if (event) message.event = event;
    if (id !== undefined) message.id = id;
    this.sink(message);
  }

  private generalParser(): EventSourceParser {
    this.parser ??= createParser({
      onEvent: ({ event, data, id }) => {
        const message: SseMessage = { data };
        if (event !== undefined) message.event = event;
        if (id !== undefined) message.id = id;
        this.sink(message);
      },
    });
    return this.parser;
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
