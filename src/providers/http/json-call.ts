import { upstreamInvalidResponse } from '../../errors.js';
import type { IRStreamEvent } from '../../protocols/ir.js';
import type { StreamDecoder } from '../../protocols/codec.js';
import { SseReader, type SseMessage } from '../../protocols/sse-parse.js';
import { stringifyBody } from './stringify-body.js';
import { decodedBatches } from './decoded-batches.js';
import { readText, type UpstreamCall, type UpstreamClient } from './upstream-client.js';
import { parseAnswer } from './get-json.js';
import { expectEventStream, upstreamError } from './upstream-error.js';

/** Longest line of an upstream event stream; an event that never ends must not fill memory. */
const MAX_LINE_BYTES = 16 * 1024 * 1024;

/** POSTs JSON, throws the upstream's error as a `GatewayError`, returns the parsed answer. */
export async function postJson(client: UpstreamClient, path: string, body: unknown, call: UpstreamCall, headers?: Record<string, string>): Promise<unknown> {
  const result = await client.post(path, await stringifyBody(body), {
    signal: call.signal,
    idleTimeoutMs: call.idleTimeoutMs,
    upstreamWait: call.upstreamWait,
    ...(headers ? { headers } : {}),
  });
  if (result.status >= 400) throw await upstreamError(result);
  return parseAnswer(await readText(result.body, undefined, result.upstreamWait), result.redact);
}

/**
 * POSTs a streaming request and yields the IR events the upstream codec's decoder reads from the
 * SSE body, one batch per upstream read: each read is parsed and decoded in one synchronous pass.
 * Leaving the loop early (client gone) destroys the upstream body, which frees the socket.
 */
export async function* streamIR(
  client: UpstreamClient,
  path: string,
  body: unknown,
  call: UpstreamCall,
  decoder: StreamDecoder,
  headers?: Record<string, string>,
): AsyncGenerator<IRStreamEvent[]> {
  const result = await client.post(path, await stringifyBody(body), {
    signal: call.signal,
    idleTimeoutMs: call.idleTimeoutMs,
    upstreamWait: call.upstreamWait,
    headers: { accept: 'text/event-stream', ...headers },
  });
  if (result.status >= 400) throw await upstreamError(result);
  await expectEventStream(result);
  yield* decodedBatches(result, new LineBoundedSseReader(), decoder);
}

/** SSE framing that refuses an event that never ends (no newline) before it fills memory. */
export class LineBoundedSseReader extends SseReader {
  private line = 0;

  override feed(chunk: Uint8Array, onMessage: (message: SseMessage) => void): void {
    const newline = chunk.lastIndexOf(10);
    this.line = newline < 0 ? this.line + chunk.length : chunk.length - newline - 1;
    if (this.line > MAX_LINE_BYTES) throw upstreamInvalidResponse('The upstream sent a stream event larger than the gateway accepts.');
    super.feed(chunk, onMessage);
  }
}
