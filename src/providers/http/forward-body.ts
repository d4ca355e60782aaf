import type { UpstreamReply } from '../provider.js';
import type { UpstreamBody } from './upstream-body.js';
import type { UpstreamCall, UpstreamClient } from './upstream-client.js';
import { expectEventStream, upstreamError } from './upstream-error.js';

/**
 * A passthrough call: POSTs a client's body as it is, asks for an event stream when `streaming`,
 * and returns the upstream's answer to pipe back. An error status is thrown as a `GatewayError`,
 * and a "stream" that is not an event stream (a proxy's page) fails before anything is sent.
 */
export async function forwardBody(
  client: UpstreamClient,
  path: string,
  body: UpstreamBody,
  streaming: boolean,
  call: UpstreamCall,
  headers: Record<string, string> = {},
): Promise<UpstreamReply> {
  const result = await client.post(path, body, {
    signal: call.signal,
    idleTimeoutMs: call.idleTimeoutMs,
    upstreamWait: call.upstreamWait,
    headers: streaming ? { ...headers, accept: 'text/event-stream' } : headers,
  });
  if (result.status >= 400) throw await upstreamError(result);
  if (streaming) await expectEventStream(result);
  const contentType = String(result.headers['content-type'] ?? (streaming ? 'text/event-stream' : 'application/json'));
  return { status: result.status, contentType, body: result.body, redact: result.redact };
}
