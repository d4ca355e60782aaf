import { GatewayError } from '../errors.js';
import { jsonResponse } from '../http/json-response.js';

/**
 * The JSON-RPC error codes `/mcp` answers with over HTTP, as the SDK's own transport does: the
 * JSON-RPC 2.0 ones for a body that is not JSON or not a message, and the SDK's `-32000` (a
 * transport error: a header, the session's absence, a limit) and `-32001` (no such session).
 */
export const RPC = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
  transportError: -32000,
  sessionNotFound: -32001,
} as const;

/** The JSON-RPC code of a gateway error's `code`, when it is not a transport error. */
const RPC_CODES: Record<string, number> = {
  invalid_json: RPC.parseError,
  invalid_encoding: RPC.parseError,
  missing_body: RPC.parseError,
  incomplete_body: RPC.parseError,
  invalid_message: RPC.invalidRequest,
  json_too_deep: RPC.invalidRequest,
  json_too_large: RPC.invalidRequest,
  too_many_keys: RPC.invalidRequest,
  batch_refused: RPC.invalidRequest,
  already_initialized: RPC.invalidRequest,
  session_not_found: RPC.sessionNotFound,
};

/** The JSON-RPC error code an HTTP error of the gateway is answered with on `/mcp`. */
export function rpcCodeOf(error: GatewayError): number {
  if (error.status >= 500) return RPC.internalError;
  return (error.code !== null ? RPC_CODES[error.code] : undefined) ?? RPC.transportError;
}

/** A 400 naming what is wrong with the message, with the JSON-RPC code `code` maps to. */
export function badMessage(
  message: string,
  code: 'invalid_message' | 'batch_refused' | 'already_initialized' | 'session_required' | 'unsupported_protocol_version',
): GatewayError {
  return new GatewayError({ status: 400, message, code });
}

/** 404 -32001, in the SDK's words: a session never made, ended, or another key's (ids are not confirmed to strangers). */
export function sessionNotFound(): GatewayError {
  return new GatewayError({ status: 404, message: 'Session not found', code: 'session_not_found' });
}

/** 400 -32000, in the SDK's words. */
export function sessionRequired(): GatewayError {
  return badMessage('Bad Request: Mcp-Session-Id header is required', 'session_required');
}

/** A JSON-RPC error answered to a request, as any error response to it: a 200 whose body says it failed. */
export function rpcErrorAnswer(id: unknown, code: number, message: string): Response {
  return jsonResponse({ jsonrpc: '2.0', id: id ?? null, error: { code, message } });
}
