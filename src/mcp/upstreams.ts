import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { McpServerConfig } from './mcp-options.js';

const CLIENT_INFO = { name: 'infergate', version: '1' };

/** A connected client of one upstream, and the upstream session it holds. */
export interface UpstreamConnection {
  client: Client;
  sessionId: string | undefined;
  protocolVersion: string | undefined;
  /** Leaves the upstream session open (another request, maybe on another instance, continues it). */
  close(): Promise<void>;
}

/**
 * Connects to an upstream HTTP server: a new session (`initialize`), or an existing one by its id
 * (no `initialize`: the upstream session goes on as it was). Credentials from the config are
 * injected on every request.
 */
export async function connectHttp(
  config: Extract<McpServerConfig, { url: string }>,
  resume: { sessionId?: string | undefined; protocolVersion?: string | undefined } | undefined,
  signal: AbortSignal,
): Promise<UpstreamConnection> {
  const headers: Record<string, string> = { ...config.headers };
  if (config.bearerToken) headers.authorization = `Bearer ${config.bearerToken}`;
  const transport = new StreamableHTTPClientTransport(new URL(config.url), {
    requestInit: { headers },
    ...(resume?.sessionId ? { sessionId: resume.sessionId } : {}),
  });
  if (resume?.protocolVersion) transport.setProtocolVersion(resume.protocolVersion);
  const client = new Client(CLIENT_INFO, { capabilities: {} });
  if (resume?.sessionId) {
    // Connecting with a known session id skips `initialize`.
    await client.connect(transport, { signal });
  } else {
    await client.connect(transport, { signal });
  }
  return {
    client,
    sessionId: transport.sessionId,
    protocolVersion: transport.protocolVersion ?? resume?.protocolVersion,
    close: () => client.close(),
  };
}
