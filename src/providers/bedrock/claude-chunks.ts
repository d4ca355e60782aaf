import { isGatewayError, upstreamInvalidResponse } from '../../errors.js';
import { parseObject } from '../../json.js';
import type { SseMessage } from '../../protocols/sse-parse.js';
import { redactedError } from '../http/upstream-error.js';
import { transportError, type UpstreamResult } from '../http/upstream-client.js';
import { EventStreamReader } from './event-stream.js';

/**
 * Claude's `invoke-with-response-stream` answer is an event stream of `chunk` events whose
 * payload is `{"bytes": base64 of one Anthropic stream event's JSON}`. Read back, each is the
 * Anthropic event (`message_start`, `content_block_delta`…) its type names.
 */
export function anthropicEventOf(event: SseMessage): SseMessage {
  if (event.event !== 'chunk') return { event: event.event ?? '', data: '' };
  const bytes = parseObject(event.data)?.bytes;
  if (typeof bytes !== 'string') throw upstreamInvalidResponse('The upstream sent a stream chunk without bytes.');
  const data = Buffer.from(bytes, 'base64').toString('utf8');
  const type = /^\s*\{\s*"type"\s*:\s*"([a-z_]+)"/.exec(data)?.[1] ?? parseObject(data)?.type;
  if (typeof type !== 'string') throw upstreamInvalidResponse('The upstream sent a stream chunk that is not an Anthropic event.');
  return { event: type, data };
}

/**
 * The same stream as Anthropic's SSE (`event: <type>\ndata: <json>\n\n`) for a Messages client on
 * the passthrough path: each upstream read becomes one piece of SSE text, the events it held.
 * An exception message throws (the passthrough then ends the stream with an Anthropic error event).
 */
export async function* anthropicSse(result: UpstreamResult): AsyncGenerator<Uint8Array> {
  const reader = new EventStreamReader(anthropicEventOf);
  let text = '';
  const add = (event: SseMessage) => {
    // One `data:` line per event: a payload with line breaks is written again without them.
    const data = event.data.includes('\n') ? JSON.stringify(JSON.parse(event.data)) : event.data;
    if (data !== '') text += `event: ${event.event}\ndata: ${data}\n\n`;
  };
  try {
    for await (const chunk of result.body as AsyncIterable<Uint8Array>) {
      reader.feed(chunk, add);
      if (text !== '') {
        yield Buffer.from(text, 'utf8');
        text = '';
      }
    }
    reader.end();
  } catch (error) {
    const failure = transportError(error);
    throw isGatewayError(failure) ? redactedError(failure, result.redact) : failure;
  } finally {
    if (!result.body.destroyed) result.body.destroy();
  }
}
