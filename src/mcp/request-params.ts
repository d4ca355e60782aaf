import { ClientRequestSchema, isJSONRPCRequest, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** Each request method MCP defines for a client, and its schema (from the SDK, so it stays in step with it). */
const REQUEST_SCHEMAS = new Map(ClientRequestSchema.options.map((schema) => [schema.shape.method.value as string, schema]));

/** Longest piece of a client's path repeated in a message. */
const MAX_PATH = 100;

/**
 * What is wrong with a request's params, by MCP's schema of its method, or undefined when they are
 * fine (or the message is no request of a method MCP defines: an unknown one is the server's
 * -32601). The SDK's server parses them before its handler runs and answers a failure as -32603,
 * an internal error; the gateway answers -32602 Invalid params, as JSON-RPC and MCP ask.
 */
export function invalidParams(message: JSONRPCMessage): string | undefined {
  if (!isJSONRPCRequest(message)) return undefined;
  const schema = REQUEST_SCHEMAS.get(message.method);
  if (!schema) return undefined;
  const parsed = schema.safeParse({ method: message.method, params: message.params });
  if (parsed.success) return undefined;
  const [issue] = parsed.error.issues;
  const path = issue?.path.map(String).join('.') ?? 'params';
  return `Invalid params for ${message.method}: ${path.length > MAX_PATH ? `${path.slice(0, MAX_PATH)}…` : path}: ${issue?.message ?? 'invalid'}`;
}
