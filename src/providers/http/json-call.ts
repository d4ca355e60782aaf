import { GatewayError } from '../../errors.js';
import type { IRStreamEvent } from '../../protocols/ir.js';
import { parseSse } from '../../protocols/sse-parse.js';
import { readText, upstreamChunks, type UpstreamClient } from './upstream-client.js';
import { upstreamError } from './upstream-error.js';

type SseMessage = { event?: string; data: string };

/** POSTs JSON, throws the upstream's error as a `GatewayError`, returns the parsed answer. */
export async function postJson(client: UpstreamClient, path: string, body: unknown, signal: AbortSignal, headers?: Record<string, string>): Promise<unknown> {
  const result = await client.post(path, JSON.stringify(body), { signal, ...(headers ? { headers } : {}) });
  if (result.status >= 400) throw await upstreamError(result);
  const text = await readText(result.body);
  try {
    return JSON.parse(text);
  } catch {
    throw new GatewayError({ status: 502, type: 'upstream_error', message: 'The upstream returned invalid JSON.', code: 'upstream_invalid_response' });
  }
}

/**
 * POSTs a streaming request and yields the IR events its decoder reads from the SSE body.
 * Leaving the loop early (client gone) destroys the upstream body, which frees the socket.
 */
export async function* streamIR(
  client: UpstreamClient,
  path: string,
  body: unknown,
  signal: AbortSignal,
  decode: (sse: AsyncIterable<SseMessage>) => AsyncIterable<IRStreamEvent>,
  headers?: Record<string, string>,
): AsyncGenerator<IRStreamEvent> {
  const result = await client.post(path, JSON.stringify(body), { signal, headers: { accept: 'text/event-stream', ...headers } });
  if (result.status >= 400) throw await upstreamError(result);
  try {
    yield* decode(parseSse(upstreamChunks(result.body)));
  } finally {
    if (!result.body.destroyed) result.body.destroy();
  }
}
