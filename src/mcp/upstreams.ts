import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { isStdioServer, type McpHttpServerConfig, type McpOptions } from './mcp-options.js';
import type { UpstreamState } from './session-store.js';

const CLIENT_INFO = { name: 'infergate', version: '1' };

/**
 * The gateway's side of its upstream MCP servers, shared by every request of one gateway: how a
 * session starts on each, how one request reaches one, how a session ends.
 */
export interface McpUpstreams {
  /** A new client session: every upstream initialized at once; one that fails is `down`, never failing the others. */
  initialize(signal: AbortSignal): Promise<Record<string, UpstreamState>>;
  /**
   * Runs `work` with a client of `server` in the upstream session `state` (re-initialized once
   * when the upstream forgot it). Answers the state to keep: changed when the session was renewed.
   */
  use<T>(
    server: string,
    state: UpstreamState | undefined,
    signal: AbortSignal,
    work: (client: Client) => Promise<T>,
  ): Promise<{ result: T; state: UpstreamState }>;
  /** Ends the upstream session (best effort: a DELETE for HTTP, nothing for stdio). */
  terminate(server: string, state: UpstreamState): Promise<void>;
  /** Stops what the gateway holds open (stdio processes, token refreshes); `gateway.dispose()` calls it. */
  close(): Promise<void>;
}

/** A JSON-RPC error as the spec writes it (the SDK's McpError would prefix its message). */
export function rpcError(code: number, message: string): Error {
  return Object.assign(new Error(message), { code });
}

/** The upstreams of `options`, over Streamable HTTP. */
export function createUpstreams(options: McpOptions): McpUpstreams {
  const http = (server: string): McpHttpServerConfig => {
    const config = options.servers[server];
    if (!config) throw rpcError(-32602, `Unknown server: ${server}`);
    if (isStdioServer(config)) throw rpcError(-32603, `Server \`${server}\` is not reachable over HTTP from this gateway yet.`);
    return config;
  };
  return {
    async initialize(signal) {
      const states: Record<string, UpstreamState> = {};
      await Promise.all(
        Object.keys(options.servers).map(async (server) => {
          try {
            const client = await connectHttp(http(server), undefined, signal);
            states[server] = stateOf(client);
            await client.close();
          } catch (error) {
            states[server] = { down: error instanceof Error ? error.message : String(error) };
          }
        }),
      );
      return states;
    },
    async use(server, state, signal, work) {
      const client = await connectHttp(http(server), state, signal);
      try {
        return { result: await work(client), state: stateOf(client, state) };
      } finally {
        await client.close();
      }
    },
    async terminate(server, state) {
      if (!state.sessionId) return;
      const client = await connectHttp(http(server), state, AbortSignal.timeout(5_000)).catch(() => undefined);
      await (client?.transport as StreamableHTTPClientTransport | undefined)?.terminateSession().catch(() => undefined);
      await client?.close();
    },
    async close() {},
  };
}

function stateOf(client: Client, previous?: UpstreamState): UpstreamState {
  const transport = client.transport as StreamableHTTPClientTransport | undefined;
  return { sessionId: transport?.sessionId ?? previous?.sessionId, protocolVersion: transport?.protocolVersion ?? previous?.protocolVersion };
}

/**
 * A client of an upstream HTTP server: a new session (`initialize`), or an existing one by its id
 * (connecting with a known session id skips `initialize`). Credentials from the config are
 * injected on every request.
 */
async function connectHttp(config: McpHttpServerConfig, resume: UpstreamState | undefined, signal: AbortSignal): Promise<Client> {
  const headers: Record<string, string> = { ...config.headers };
  if (config.bearerToken) headers.authorization = `Bearer ${config.bearerToken}`;
  const transport = new StreamableHTTPClientTransport(new URL(config.url), {
    requestInit: { headers },
    ...(resume?.sessionId ? { sessionId: resume.sessionId } : {}),
  });
  if (resume?.protocolVersion) transport.setProtocolVersion(resume.protocolVersion);
  const client = new Client(CLIENT_INFO, { capabilities: {} });
  await client.connect(transport, { signal });
  return client;
}
