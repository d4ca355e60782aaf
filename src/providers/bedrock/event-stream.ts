import { EventStreamCodec, type Message } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { upstreamInvalidResponse, upstreamStreamCut } from '../../errors.js';
import type { StreamDecoder } from '../../protocols/codec.js';
import { bedrockException } from '../../protocols/converse/exception.js';
import type { IRStreamEvent } from '../../protocols/ir.js';
import { parseObject } from '../../json.js';
import type { SseMessage } from '../../protocols/sse-parse.js';
import { decodedBatches, type StreamFraming } from '../http/decoded-batches.js';
import type { UpstreamResult } from '../http/upstream-client.js';
import { ByteQueue } from './byte-queue.js';

/** Largest event-stream message accepted (AWS's limit is 16 MiB); a bigger length is a corrupt stream. */
const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

/**
 * Reads the binary `application/vnd.amazon.eventstream` framing synchronously, one upstream read
 * at a time: each whole message (its total length is the prelude's first four bytes, as in the
 * AWS SDK's chunked stream) is decoded by `@smithy/eventstream-codec`, which checks both CRCs
 * and parses the headers, and handed on as the event a stream decoder reads (`eventOf`, then
 * `translate`: Claude's `chunk` events into Anthropic events). Bytes of a message split across
 * reads wait for the next read, as pieces (`ByteQueue`): a message is copied once, whatever the
 * number of reads it came in.
 */
export class EventStreamReader implements StreamFraming {
  private readonly codec = new EventStreamCodec(toUtf8, fromUtf8);
  private readonly pending = new ByteQueue();

  constructor(private readonly translate: (event: SseMessage) => SseMessage = (event) => event) {}

  feed(chunk: Uint8Array, onMessage: (event: SseMessage) => void): void {
    this.pending.push(chunk);
    while (this.pending.length >= 4) {
      const total = this.pending.peekUint32();
      if (total < 16 || total > MAX_MESSAGE_BYTES) throw upstreamInvalidResponse('The upstream sent a malformed event-stream message.');
      if (this.pending.length < total) break;
      let message: Message;
      try {
        message = this.codec.decode(this.pending.take(total));
      } catch (error) {
        throw upstreamInvalidResponse('The upstream sent a corrupt event-stream message.', error);
      }
      onMessage(this.translate(eventOf(message)));
    }
  }

  /** The bytes ended: half a message left is a cut stream. */
  end(): void {
    if (this.pending.length > 0) throw upstreamStreamCut();
  }
}

/**
 * One event-stream message as an `SseMessage` (`event` its `:event-type`, `data` its payload as
 * text); an `exception` or `error` message throws the `GatewayError` it stands for.
 */
export function eventOf(message: Message): SseMessage {
  const header = (name: string) => {
    const value = message.headers[name]?.value;
    return typeof value === 'string' ? value : undefined;
  };
  const type = header(':message-type');
  const data = toUtf8(message.body);
  if (type === 'exception') {
    const payload = parseObject(data);
    const text = typeof payload?.message === 'string' ? payload.message : typeof payload?.Message === 'string' ? payload.Message : undefined;
    throw bedrockException(header(':exception-type') ?? 'internalServerException', text);
  }
  if (type === 'error') throw bedrockException(header(':error-code') ?? 'internalServerException', header(':error-message'));
  return { event: header(':event-type') ?? '', data };
}

/** The IR events of an event-stream answer, one batch per upstream read (as `streamIR` for SSE). */
export function eventStreamIR(result: UpstreamResult, decoder: StreamDecoder, translate?: (event: SseMessage) => SseMessage): AsyncGenerator<IRStreamEvent[]> {
  return decodedBatches(result, new EventStreamReader(translate), decoder);
}
