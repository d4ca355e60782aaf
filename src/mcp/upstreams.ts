import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { type Logger, silentLogger } from '../logger.js';
import { isStdioServer, type McpOptions, type McpServerConfig } from './mcp-options.js';
import type { UpstreamState } from './session-store.js';
import { httpUpstream, upstreamDispatcher } from './upstream-http.js';
import { stdioUpstream } from './upstream-stdio.js';
import type { Upstream } from './upstream-client.js';
import { DEFAULT_UPSTREAM_MAX_TOTAL_TIMEOUT_MS, DEFAULT_UPSTREAM_TIMEOUT_MS, type UpstreamTimeouts } from './upstream-timeout.js';

/**
 * The gateway's side of its upstream MCP servers, shared by every request of one gateway: how a
 * session starts on each, how one request reaches one, how a session ends.
 */
export interface McpUpstreams {
  /**
   * A new client session: each of `servers` (default: every configured one) initialized at once;
   * one that fails is `down`, never failing the others.
   */
  initialize(signal: AbortSignal, servers?: readonly string[]): Promise<Record<string, UpstreamState>>;
  /**
   * Runs `work` with a client of `server` in the upstream session `state` (re-initialized once
   * when the upstream forgot it). Answers the state to keep: changed when the session was renewed.
   * Each request `work` sends is bounded by the server's timeout (`isUpstreamTimeout`).
   */
  use<T>(
    server: string,
    state: UpstreamState | undefined,
    signal: AbortSignal,
    work: (client: Client) => Promise<T>,
  ): Promise<{ result: T; state: UpstreamState }>;
  /** Ends the upstream session (best effort: a DELETE for HTTP, nothing for stdio). */
  terminate(server: string, state: UpstreamState): Promise<void>;
  /** Stops what the gateway holds open (stdio processes, pooled connections); `gateway.dispose()` calls it. */
  close(): Promise<void>;
}

/** A JSON-RPC error as the spec writes it (the SDK's McpError would prefix its message). */
export function rpcError(code: number, message: string): Error {
  return Object.assign(new Error(message), { code });
}

/** A `down` reason is kept in the session record: an upstream's error page is cut short. */
const MAX_DOWN_REASON = 300;

/**
 * The upstreams of `options`: Streamable HTTP servers and stdio commands. Throws a TypeError
 * naming the server for a config that cannot work (a header the transport sets itself, a URL
 * that is not http(s), a timeout that is not a positive number, a total shorter than a request's).
 */
export function createUpstreams(options: McpOptions, logger: Logger = silentLogger): McpUpstreams {
  const timeoutsOf = (server: string, config: McpServerConfig): UpstreamTimeouts => {
    const timeoutMs = config.timeoutMs ?? options.timeoutMs ?? DEFAULT_UPSTREAM_TIMEOUT_MS;
    const maxTotalTimeoutMs = config.maxTotalTimeoutMs ?? options.maxTotalTimeoutMs ?? Math.max(timeoutMs, DEFAULT_UPSTREAM_MAX_TOTAL_TIMEOUT_MS);
    for (const [name, value] of Object.entries({ timeoutMs, maxTotalTimeoutMs })) {
      if (!(Number.isFinite(value) && value > 0)) throw new TypeError(`mcp.servers.${server}.${name} must be a positive number of milliseconds`);
    }
    if (maxTotalTimeoutMs < timeoutMs) throw new TypeError(`mcp.servers.${server}.maxTotalTimeoutMs must be at least its timeoutMs (${timeoutMs})`);
    return { timeoutMs, maxTotalTimeoutMs };
  };
  const servers = Object.entries(options.servers);
  const timeouts = servers.map(([server, config]) => timeoutsOf(server, config));
  // Progress restarts a call's clock: the pool waits as long as the longest call may run.
  const dispatcher = upstreamDispatcher(Math.max(0, ...timeouts.filter((_, at) => !isStdioServer(servers[at]![1])).map((each) => each.maxTotalTimeoutMs)));
  const upstreams = new Map<string, Upstream>(
    servers.map(([server, config], at) => [
      server,
      isStdioServer(config) ? stdioUpstream(server, config, timeouts[at]!, logger) : httpUpstream(server, config, timeouts[at]!, dispatcher),
    ]),
  );
  const upstream = (server: string): Upstream => {
    const found = upstreams.get(server);
    if (!found) throw rpcError(-32602, `Unknown server: ${server}`);
    return found;
  };

  return {
    async initialize(signal, servers = [...upstreams.keys()]) {
      const states = await Promise.all(
        servers.map(async (server): Promise<[string, UpstreamState]> => {
          try {
            return [server, await upstream(server).initialize(signal)];
          } catch (error) {
            const reason = error instanceof Error ? error.message : String(error);
            const detail = (error as { detail?: unknown })?.detail;
            logger.warn('MCP server unavailable to a new session', { server, reason, ...(typeof detail === 'string' ? { detail } : {}) });
            return [server, { down: reason.length > MAX_DOWN_REASON ? `${reason.slice(0, MAX_DOWN_REASON)}…` : reason }];
          }
        }),
      );
      return Object.fromEntries(states);
    },
    use: (server, state, signal, work) => upstream(server).use(state, signal, work),
    terminate: (server, state) => upstream(server).terminate(state),
    async close() {
      await Promise.all([...upstreams.values()].map((each) => each.close().catch(() => {})));
      await dispatcher.close();
    },
  };
}
