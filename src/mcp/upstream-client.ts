import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { AnySchema, SchemaOutput } from '@modelcontextprotocol/sdk/server/zod-compat.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { ClientRequest } from '@modelcontextprotocol/sdk/types.js';
import { passThroughValidator } from './pass-through-validator.js';
import type { UpstreamState } from './session-store.js';
import { UpstreamTimeoutError } from './upstream-timeout.js';

const CLIENT_INFO = { name: 'infergate', version: '1' };

/**
 * The gateway's client of one upstream: every request it sends is bounded by the server's
 * timeout, whatever options the caller passed, and one that runs out fails with an
 * `UpstreamTimeoutError` (the SDK's own timeout error looks like a cancellation).
 */
export class McpUpstreamClient extends Client {
  constructor(
    readonly server: string,
    readonly timeoutMs: number,
  ) {
    super(CLIENT_INFO, { capabilities: {}, jsonSchemaValidator: passThroughValidator });
  }

  override async request<T extends AnySchema>(request: ClientRequest, resultSchema: T, options?: RequestOptions): Promise<SchemaOutput<T>> {
    const deadline = AbortSignal.timeout(this.timeoutMs);
    const signal = options?.signal ? AbortSignal.any([options.signal, deadline]) : deadline;
    try {
      // The SDK's own timer is only a backstop: its error would look like a cancellation.
      return await super.request(request, resultSchema, { ...options, signal, timeout: this.timeoutMs + 1000 });
    } catch (error) {
      if (deadline.aborted && !options?.signal?.aborted) throw new UpstreamTimeoutError(this.server, this.timeoutMs);
      throw error;
    }
  }
}

/** One upstream server, whatever it is reached by (`upstream-http.ts`, `upstream-stdio.ts`). */
export interface Upstream {
  /** A new upstream session, or a failure that makes the server `down` for the client session. */
  initialize(signal: AbortSignal): Promise<UpstreamState>;
  use<T>(state: UpstreamState | undefined, signal: AbortSignal, work: (client: Client) => Promise<T>): Promise<{ result: T; state: UpstreamState }>;
  terminate(state: UpstreamState): Promise<void>;
  close(): Promise<void>;
}
