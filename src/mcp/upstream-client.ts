import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { AnySchema, SchemaOutput } from '@modelcontextprotocol/sdk/server/zod-compat.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { ClientRequest } from '@modelcontextprotocol/sdk/types.js';
import { passThroughValidator } from './pass-through-validator.js';
import type { UpstreamState } from './session-store.js';
import { UpstreamTimeoutError, type UpstreamTimeouts } from './upstream-timeout.js';

const CLIENT_INFO = { name: 'infergate', version: '1' };

/**
 * The gateway's client of one upstream: every request it sends is bounded by the server's
 * timeout, whatever options the caller passed, and one that runs out fails with an
 * `UpstreamTimeoutError` (the SDK's own timeout error looks like a cancellation). A tool call
 * asks the upstream for progress, whether the client did or not: each notification starts its
 * clock again (work is happening, as MCP's lifecycle allows), up to `maxTotalTimeoutMs`.
 */
export class McpUpstreamClient extends Client {
  constructor(
    readonly server: string,
    readonly timeouts: UpstreamTimeouts,
  ) {
    super(CLIENT_INFO, { capabilities: {}, jsonSchemaValidator: passThroughValidator });
  }

  override async request<T extends AnySchema>(request: ClientRequest, resultSchema: T, options?: RequestOptions): Promise<SchemaOutput<T>> {
    const { timeoutMs, maxTotalTimeoutMs } = this.timeouts;
    const deadline = new AbortController();
    let expiredAfter = timeoutMs;
    const expire = (after: number) => () => {
      expiredAfter = after;
      deadline.abort();
    };
    let quiet = setTimeout(expire(timeoutMs), timeoutMs);
    const calling = request.method === 'tools/call';
    const total = calling ? setTimeout(expire(maxTotalTimeoutMs), maxTotalTimeoutMs) : undefined;
    const signal = options?.signal ? AbortSignal.any([options.signal, deadline.signal]) : deadline.signal;
    const onprogress: RequestOptions['onprogress'] = (progress) => {
      if (deadline.signal.aborted) return;
      clearTimeout(quiet);
      quiet = setTimeout(expire(timeoutMs), timeoutMs);
      options?.onprogress?.(progress);
    };
    try {
      // The SDK's own timers are only a backstop: their error would look like a cancellation.
      return await super.request(request, resultSchema, {
        ...options,
        signal,
        timeout: timeoutMs + 1000,
        ...(calling ? { onprogress, resetTimeoutOnProgress: true, maxTotalTimeout: maxTotalTimeoutMs + 1000 } : {}),
      });
    } catch (error) {
      if (deadline.signal.aborted && !options?.signal?.aborted) throw new UpstreamTimeoutError(this.server, expiredAfter);
      throw error;
    } finally {
      clearTimeout(quiet);
      clearTimeout(total);
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
