import { isGatewayError, upstreamInvalidResponse } from '../../errors.js';
import type { IRStreamEvent } from '../../protocols/ir.js';
import { parseSse } from '../../protocols/sse-parse.js';
import { stringifyBody } from './stringify-body.js';
import { readText, upstreamChunks, type UpstreamCall, type UpstreamClient } from './upstream-client.js';
import { parseAnswer } from './get-json.js';
import { expectEventStream, redactedError, upstreamError } from './upstream-error.js';

type SseMessage = { event?: string; data: string };

/** Longest line of an upstream event stream; an event that never ends must not fill memory. */
const MAX_LINE_BYTES = 16 * 1024 * 1024;

/** POSTs JSON, throws the upstream's error as a `GatewayError`, returns the parsed answer. */
export async function postJson(client: UpstreamClient, path: string, body: unknown, call: UpstreamCall, headers?: Record<string, string>): Promise<unknown> {
  const result = await client.post(path, await stringifyBody(body), {
    signal: call.signal,
    idleTimeoutMs: call.idleTimeoutMs,
    ...(headers ? { headers } : {}),
  });
  if (result.status >= 400) throw await upstreamError(result);
  return parseAnswer(await readText(result.body), result.redact);
}

/**
 * POSTs a streaming request and yields the IR events its decoder reads from the SSE body.
 * Leaving the loop early (client gone) destroys the upstream body, which frees the socket.
 */
export async function* streamIR(
  client: UpstreamClient,
  path: string,
  body: unknown,
  call: UpstreamCall,
  decode: (sse: AsyncIterable<SseMessage>) => AsyncIterable<IRStreamEvent>,
  headers?: Record<string, string>,
): AsyncGenerator<IRStreamEvent> {
  const result = await client.post(path, await stringifyBody(body), {
    signal: call.signal,
    idleTimeoutMs: call.idleTimeoutMs,
    headers: { accept: 'text/event-stream', ...headers },
  });
  if (result.status >= 400) throw await upstreamError(result);
  await expectEventStream(result);
  try {
    yield* decode(parseSse(boundedLines(upstreamChunks(result.body))));
  } catch (error) {
    // An upstream error event's message reaches the client: not with the credentials it quotes.
    throw isGatewayError(error) ? redactedError(error, result.redact) : error;
  } finally {
    if (!result.body.destroyed) result.body.destroy();
  }
}

/** Passes the chunks on, failing once a line (no newline yet) outgrows `MAX_LINE_BYTES`. */
async function* boundedLines(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  let line = 0;
  for await (const chunk of chunks) {
    const newline = chunk.lastIndexOf(10);
    line = newline < 0 ? line + chunk.length : chunk.length - newline - 1;
    if (line > MAX_LINE_BYTES) {
      throw upstreamInvalidResponse('The upstream sent a stream event larger than the gateway accepts.');
    }
    yield chunk;
  }
}
