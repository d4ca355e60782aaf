import type { McpSessionStore } from './session-store.js';

/** OAuth 2.0 client credentials for an upstream: the gateway fetches and refreshes the token itself. */
export interface McpOAuthClientCredentials {
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  scope?: string | undefined;
  /** Sent as `audience` (Auth0, Keycloak), and as `resource` (RFC 8707) when it is an absolute URL. */
  audience?: string | undefined;
  /** How the client authenticates to the token endpoint (default `client_secret_basic`, which RFC 6749 makes every server take). */
  authMethod?: 'client_secret_basic' | 'client_secret_post' | undefined;
}

/** An upstream reached over Streamable HTTP; its credentials are injected on every request, never shown. */
export interface McpHttpServerConfig {
  url: string;
  headers?: Record<string, string> | undefined;
  bearerToken?: string | undefined;
  oauth?: McpOAuthClientCredentials | undefined;
  /** Per request to this upstream (default `McpOptions.timeoutMs`). */
  timeoutMs?: number | undefined;
  /** Longest a tool call reporting progress may run (default `McpOptions.maxTotalTimeoutMs`). */
  maxTotalTimeoutMs?: number | undefined;
}

/** A local command spoken to over stdio (Node hosts: the standalone server); one process per gateway instance. */
export interface McpStdioServerConfig {
  command: string;
  args?: readonly string[] | undefined;
  /** The child's environment on top of a minimal one (PATH, HOME…): the gateway's own is not inherited. */
  env?: Record<string, string> | undefined;
  cwd?: string | undefined;
  timeoutMs?: number | undefined;
  maxTotalTimeoutMs?: number | undefined;
}

/** One upstream MCP server. */
export type McpServerConfig = McpHttpServerConfig | McpStdioServerConfig;

/** `createGateway({ mcp })` and the config file's `mcp`. */
export interface McpOptions {
  /** Upstream servers by name; a name is the prefix of its tools (`github__create_issue`). */
  servers: Record<string, McpServerConfig>;
  /** Where client sessions are kept (default: this process's memory); share one across instances. */
  sessionStore?: McpSessionStore | undefined;
  /** Keep each tool call's arguments on its usage event (default false: never). */
  captureArguments?: boolean | undefined;
  /**
   * A request to an upstream that takes longer fails (default 60 s). A tool call's clock starts
   * again at each progress notification the upstream sends, up to `maxTotalTimeoutMs`.
   */
  timeoutMs?: number | undefined;
  /** Longest a tool call may run however often it reports progress (default 10 min, or `timeoutMs` if longer). */
  maxTotalTimeoutMs?: number | undefined;
}

/** Between a server's name and its tool's in the names clients see: `github__create_issue`. */
export const TOOL_SEPARATOR = '__';

export function isStdioServer(config: McpServerConfig): config is McpStdioServerConfig {
  return 'command' in config;
}
