import type { GatewayError } from '../errors.js';
import { bearerToken, type ClientStyle } from '../http/client-style.js';
import { rpcCodeOf } from './mcp-errors.js';

/**
 * MCP clients (Claude Code, Codex, Gemini CLI, the SDKs): the key as `Authorization: Bearer`, and
 * every error a JSON-RPC error response with no id, as the MCP transport answers its own HTTP
 * errors: `{"jsonrpc":"2.0","error":{"code","message","data":{"code"}},"id":null}`. `data.code` is the
 * gateway's code (`rate_limit_exceeded`, `invalid_api_key`…), for programs to branch on.
 */
export const mcpStyle: ClientStyle = {
  name: 'mcp',
  apiKey: bearerToken,
  missingKeyMessage: "You didn't provide an API key. Send it as 'Authorization: Bearer YOUR_KEY' (the MCP server's headers in your client's configuration).",
  errorBody: (error) => ({
    jsonrpc: '2.0',
    error: { code: rpcCodeOf(error), message: error.message, ...(error.code !== null ? { data: { code: error.code } } : {}) },
    id: null,
  }),
  errorHeaders: authChallenge,
};

/**
 * A 401 carries the challenge HTTP requires of it (RFC 9110 §11.6.1), a Bearer one (RFC 6750 §3):
 * `error="invalid_token"` when a key came and was refused. It names no `resource_metadata`: the
 * gateway's keys are not OAuth tokens and it is no OAuth resource server, so there is no
 * authorization server to discover; a client that looks for one anyway finds no metadata and
 * stops (MCP authorization is optional; docs/mcp.md, "Protocol").
 */
function authChallenge(error: GatewayError): Record<string, string> {
  if (error.status !== 401) return {};
  const refused = error.code === 'invalid_api_key' || error.code === 'api_key_disabled';
  return { 'www-authenticate': `Bearer realm="infergate"${refused ? ', error="invalid_token"' : ''}` };
}
