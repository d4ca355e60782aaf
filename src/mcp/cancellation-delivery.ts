import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { isJSONRPCNotification } from '@modelcontextprotocol/sdk/types.js';

/** How long a cancelled call waits for its `notifications/cancelled` to reach the upstream. */
const DELIVERY_MS = 2_000;

/**
 * Runs `call` on an HTTP upstream's client so that the upstream hears of its cancellation:
 *
 * - The call's JSON-RPC id is not 0. Servers on the TypeScript SDK (1.32.2 and before) ignore
 *   `notifications/cancelled` for request id 0 (`if (!requestId) return`, typescript-sdk#2283),
 *   and 0 is the first id of a client that resumed its session without `initialize`: each
 *   request's client here.
 * - A call that ends with notifications still being sent (a cancelled or timed out request: the
 *   SDK sends `notifications/cancelled` without awaiting it) waits for them, briefly: closing the
 *   client right after (each request's client is closed once its work ends) aborts those POSTs.
 */
export async function withCancellationDelivered<T>(client: Client, call: () => Promise<T>): Promise<T> {
  const transport = client.transport;
  // A client of this request alone (HTTP); a shared client (stdio) is neither resumed nor closed after the call.
  if (!(transport instanceof StreamableHTTPClientTransport)) return call();
  const ids = client as unknown as { _requestMessageId?: number };
  if (ids._requestMessageId === 0) ids._requestMessageId = 1;
  const notifying = new Set<Promise<void>>();
  const send = transport.send;
  transport.send = (message, options) => {
    const sent = send.call(transport, message, options);
    if (isJSONRPCNotification(message)) {
      notifying.add(sent);
      const done = () => notifying.delete(sent);
      sent.then(done, done);
    }
    return sent;
  };
  try {
    return await call();
  } finally {
    transport.send = send;
    if (notifying.size > 0) await settledOrLate([...notifying]);
  }
}

async function settledOrLate(sends: Promise<void>[]): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, DELIVERY_MS);
  });
  await Promise.race([Promise.allSettled(sends), late]);
  clearTimeout(timer);
}
