/** At most this many calls are cancellable by notification at once on one gateway instance. */
const MAX_IN_FLIGHT = 10_000;

/**
 * The requests running on this gateway instance, by client session and JSON-RPC id. A client's
 * `notifications/cancelled` comes in a POST of its own, served by a fresh server that knows
 * nothing of the call it names: this map is how it reaches that call.
 *
 * Instance-local: a cancellation that finds nothing here is published to the other instances
 * through the session store, when it can (`McpSessionStore.publishCancel`), and each looks it up
 * in its own map.
 */
export class InFlightCalls {
  private readonly calls = new Map<string, (reason: unknown) => void>();

  constructor(private readonly max = MAX_IN_FLIGHT) {}

  /**
   * Registers a running request; call the answer once it ended. When the map is full, or the id
   * is already running in that session, the request runs without it: the client going away
   * still stops it.
   */
  add(sessionId: string, requestId: string | number, cancel: (reason: unknown) => void): () => void {
    const id = callId(sessionId, requestId);
    if (this.calls.size >= this.max || this.calls.has(id)) return () => {};
    this.calls.set(id, cancel);
    return () => {
      if (this.calls.get(id) === cancel) this.calls.delete(id);
    };
  }

  /** Cancels the request `requestId` of the session, when it runs here; says whether it did. */
  cancel(sessionId: string, requestId: string | number, reason: unknown): boolean {
    const cancel = this.calls.get(callId(sessionId, requestId));
    cancel?.(reason);
    return cancel !== undefined;
  }

  get size(): number {
    return this.calls.size;
  }
}

/** JSON keeps `1` and `"1"` apart, as JSON-RPC does. */
function callId(sessionId: string, requestId: string | number): string {
  return JSON.stringify([sessionId, requestId]);
}

const byGateway = new WeakMap<object, InFlightCalls>();

/** The in-flight calls of the gateway instance that owns `upstreams` (one object per instance). */
export function inFlightCalls(upstreams: object): InFlightCalls {
  let calls = byGateway.get(upstreams);
  if (!calls) {
    calls = new InFlightCalls();
    byGateway.set(upstreams, calls);
  }
  return calls;
}
