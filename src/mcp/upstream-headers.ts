import type { McpHttpServerConfig } from './mcp-options.js';

/**
 * Headers the MCP transport sets itself. The SDK spreads configured headers after its own, so
 * one of these in a config would replace the session id, the protocol version or the framing.
 */
export const TRANSPORT_HEADERS: ReadonlySet<string> = new Set([
  'mcp-session-id',
  'mcp-protocol-version',
  'last-event-id',
  'content-type',
  'accept',
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
]);

/**
 * The headers sent on every request to the upstream `server`: the config's `headers`, and its
 * `bearerToken` as `Authorization`. Checked when the gateway starts: a TypeError names the
 * server and the header (never its value) for a header the transport sets itself, a name or
 * value HTTP refuses, or two sources of `Authorization`.
 */
export function upstreamHeaders(server: string, config: McpHttpServerConfig): Record<string, string> {
  const where = `mcp.servers.${server}`;
  let url: URL | undefined;
  try {
    url = new URL(config.url);
  } catch {}
  if (url?.protocol !== 'http:' && url?.protocol !== 'https:') throw new TypeError(`${where}.url must be an http(s) URL`);
  if (config.bearerToken !== undefined && config.oauth) throw new TypeError(`${where}: set either bearerToken or oauth, not both`);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(config.headers ?? {})) {
    const lower = name.toLowerCase();
    if (TRANSPORT_HEADERS.has(lower)) throw new TypeError(`${where}.headers.${name}: the MCP transport sets this header itself`);
    if (lower === 'authorization' && (config.bearerToken !== undefined || config.oauth)) {
      throw new TypeError(`${where}.headers.${name}: set either an Authorization header or bearerToken/oauth, not both`);
    }
    try {
      new Headers([[name, value]]);
    } catch {
      throw new TypeError(`${where}.headers.${name}: not a valid HTTP header name or value`);
    }
    headers[lower] = value;
  }
  if (config.bearerToken !== undefined) headers.authorization = `Bearer ${config.bearerToken}`;
  return headers;
}
