/** One upstream MCP server: Streamable HTTP (credentials injected, never shown) or a local command over stdio. */
export type McpServerConfig =
  | { url: string; headers?: Record<string, string> | undefined; bearerToken?: string | undefined }
  | { command: string; args?: readonly string[] | undefined; env?: Record<string, string> | undefined };

/** `createGateway({ mcp })` and the config file's `mcp`. */
export interface McpOptions {
  servers: Record<string, McpServerConfig>;
}

/** Between a server's name and its tool's in the names clients see: `github__create_issue`. */
export const TOOL_SEPARATOR = '__';
