import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Agent } from 'undici';
import { pooledAgent } from '../providers/http/upstream-client.js';
import type { McpHttpServerConfig } from './mcp-options.js';
import type { UpstreamState } from './session-store.js';
import { McpUpstreamClient, type Upstream } from './upstream-client.js';
import { upstreamFetch } from './upstream-fetch.js';
import { upstreamHeaders } from './upstream-headers.js';
import { oauthTokens } from './upstream-oauth.js';
import { blankedError, secretBlanker } from './upstream-redact.js';
import { type UpstreamTimeouts, withDeadline } from './upstream-timeout.js';

/** A stream that broke is not resumed: the request fails and the client may send it again. */
const NO_RECONNECTION = { maxRetries: 0, initialReconnectionDelay: 1000, maxReconnectionDelay: 1000, reconnectionDelayGrowFactor: 1 };

/**
 * The pooled keep-alive dispatcher of a gateway's HTTP upstreams (the providers' defaults). A
 * tool call's answer may be silent until it is done, so undici never gives up before the longest
 * upstream timeout does.
 */
export function upstreamDispatcher(longestTimeoutMs: number): Agent {
  return pooledAgent({ headersMs: Math.max(120_000, longestTimeoutMs), bodyMs: Math.max(300_000, longestTimeoutMs) });
}

/**
 * An upstream reached over Streamable HTTP. Nothing is held between requests but the pooled
 * connections and the OAuth token: each `use` makes a client on the stored upstream session
 * (connecting with a known session id skips `initialize`), so any gateway instance serves any
 * session. An upstream that forgot the session (404: it restarted, or expired it) gets a new one
 * and the work runs again, once.
 */
export function httpUpstream(server: string, config: McpHttpServerConfig, timeouts: UpstreamTimeouts, dispatcher: Agent): Upstream {
  const { timeoutMs } = timeouts;
  const url = new URL(config.url);
  const tokens = config.oauth ? oauthTokens(server, config.oauth, dispatcher) : undefined;
  const headers = upstreamHeaders(server, config);
  const fetch = upstreamFetch(dispatcher, headers, tokens);
  // An upstream's error page may quote what it was sent.
  const blank = secretBlanker([...Object.values(headers), ...Object.values(config.headers ?? {}), config.bearerToken, config.oauth?.clientSecret]);

  const connect = async (resume: UpstreamState | undefined, signal: AbortSignal): Promise<McpUpstreamClient> => {
    const sessionId = resume?.down === undefined ? resume?.sessionId : undefined;
    const transport = new StreamableHTTPClientTransport(url, { fetch, reconnectionOptions: NO_RECONNECTION, ...(sessionId ? { sessionId } : {}) });
    // Without it a resumed session sends no MCP-Protocol-Version, and a strict server assumes 2025-03-26.
    if (sessionId && resume?.protocolVersion) transport.setProtocolVersion(resume.protocolVersion);
    const client = new McpUpstreamClient(server, timeouts);
    try {
      // `initialize` is bounded as a request; the deadline also bounds its `notifications/initialized`.
      await withDeadline(client.connect(transport, { signal }), server, timeoutMs);
    } catch (error) {
      await client.close().catch(() => {});
      throw error;
    }
    return client;
  };

  const run = async <T>(resume: UpstreamState | undefined, signal: AbortSignal, work: (client: Client) => Promise<T>) => {
    const client = await connect(resume, signal);
    try {
      const result = await work(client);
      const transport = client.transport as StreamableHTTPClientTransport;
      return { result, state: { sessionId: transport.sessionId, protocolVersion: transport.protocolVersion } };
    } finally {
      // Only the connection: the upstream session stays for the next request (DELETE is `terminate`).
      await client.close();
    }
  };

  return {
    async initialize(signal) {
      try {
        return (await run(undefined, signal, async () => undefined)).state;
      } catch (error) {
        throw blankedError(error, blank);
      }
    },
    async use(state, signal, work) {
      try {
        return await run(state, signal, work);
      } catch (error) {
        const resumed = state?.sessionId !== undefined && state.down === undefined;
        if (!resumed || !(error instanceof StreamableHTTPError && error.code === 404)) throw blankedError(error, blank);
        // The upstream forgot the session (restarted, expired it): a new one, and the work again.
        return run(undefined, signal, work).catch((again: unknown) => {
          throw blankedError(again, blank);
        });
      }
    },
    async terminate(state) {
      if (!state.sessionId || state.down !== undefined) return;
      // Best effort: an upstream that is gone has nothing left to end.
      const client = await connect(state, AbortSignal.timeout(timeoutMs)).catch(() => undefined);
      await withDeadline((client?.transport as StreamableHTTPClientTransport | undefined)?.terminateSession() ?? Promise.resolve(), server, timeoutMs).catch(
        () => {},
      );
      await client?.close();
    },
    async close() {
      await tokens?.close();
    },
  };
}
